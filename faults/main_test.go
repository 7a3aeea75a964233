package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
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
	dir, err := os.MkdirTemp("", "bakeoff-faults-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// World-readable so a namespace host's session (also root, but through
	// sshd) can run it from here.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	bakeoffBin = filepath.Join(dir, "bakeoff")
	build := exec.Command(goTool(), "build", "-trimpath", "-o", bakeoffBin, "./cmd/bakeoff")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "faults: building bakeoff: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
