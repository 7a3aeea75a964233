package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
)

// bakeoffBin is the binary under test, built once by TestMain exactly as
// `make build` builds it (static, so it can run on a namespace host too).
var bakeoffBin string

// repoRoot is the module root, one level above this package.
var repoRoot string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	repoRoot = filepath.Dir(wd)
	bin, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	defer cleanup()
	bakeoffBin = bin
	return m.Run()
}
