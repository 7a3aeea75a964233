package e2e

import (
	"os"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
)

// bakeoffBin is the binary under test, built once as `make build` builds it
// (static, so it also runs on the namespace host as the sim and the sweep).
// Without the campaigns switched on nothing runs, so nothing is built.
var bakeoffBin string

func TestMain(m *testing.M) {
	os.Exit(testbin.Main(m, "slurm e2e", &bakeoffBin, os.Getenv(slurmEnv) != ""))
}
