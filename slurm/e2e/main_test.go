package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
)

// bakeoffBin is the binary under test, built once as `make build` builds it
// (static, so it also runs on the namespace host as the sim and the sweep).
var bakeoffBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv(slurmEnv) == "" {
		// Nothing runs: skip the build too.
		return m.Run()
	}
	bin, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "slurm e2e:", err)
		return 1
	}
	defer cleanup()
	bakeoffBin = bin
	return m.Run()
}
