// Command bakeoff runs A/B campaigns of LLM-serving configurations on a GPU
// host and prints who wins at each concurrency level.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, newEnv(), os.Args[1:]))
}
