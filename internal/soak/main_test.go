package soak

import (
	"fmt"
	"os"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
)

// bakeoffBin is the binary under test, built once as `make build` builds it
// (static, so it also runs on the namespace hosts). Only the gated
// campaigns need it; the package's unit tests do not build it.
var bakeoffBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv(soakEnv) == "" && os.Getenv(scaleEnv) == "" {
		return m.Run()
	}
	bin, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 1
	}
	defer cleanup()
	bakeoffBin = bin
	return m.Run()
}
