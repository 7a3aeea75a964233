// Command bakeoff runs A/B campaigns of LLM-serving configurations on a GPU
// host and prints who wins at each concurrency level.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	// Installed as (or linked to) a file named nvidia-smi, bakeoff answers as
	// the simulated engine's fake nvidia-smi; the demo and tests rely on this.
	if filepath.Base(os.Args[0]) == "nvidia-smi" {
		args = append([]string{"sim", "nvidia-smi"}, args...)
	}
	os.Exit(run(ctx, newEnv(), args))
}
