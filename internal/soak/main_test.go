package soak

import (
	"os"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
)

// bakeoffBin is the binary under test, built once as `make build` builds it
// (static, so it also runs on the namespace hosts). Only the gated
// campaigns need it; the package's unit tests do not build it.
var bakeoffBin string

func TestMain(m *testing.M) {
	gated := os.Getenv(soakEnv) != "" || os.Getenv(scaleEnv) != ""
	os.Exit(testbin.Main(m, "soak", &bakeoffBin, gated))
}
