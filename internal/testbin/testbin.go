// Package testbin serves the tests that run bakeoff as a real process: it
// builds the binary once per test binary, as `make build` does, and finds
// free loopback ports for the servers those tests start.
package testbin

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Build compiles ./cmd/bakeoff of the module that holds the calling
// package into a fresh temporary directory and returns the binary's path
// and a cleanup that removes it. The binary is static (CGO_ENABLED=0), so
// it also runs on the test hosts that tests make in network namespaces,
// and its directory is world-readable for sessions reaching it through sshd.
func Build() (path string, cleanup func(), err error) {
	root, err := moduleRoot()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "bakeoff-test-bin-")
	if err != nil {
		return "", nil, fmt.Errorf("building bakeoff: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	if err := os.Chmod(dir, 0o755); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building bakeoff: %w", err)
	}
	path = filepath.Join(dir, "bakeoff")
	build := exec.Command(goTool(), "build", "-trimpath", "-o", path, "./cmd/bakeoff")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building bakeoff: %v\n%s", err, out)
	}
	return path, cleanup, nil
}

// Main runs a test binary's tests for TestMain and returns the exit code
// for os.Exit. When build is true it first builds bakeoff (see Build),
// stores the binary's path in *bin, and removes the binary after the
// tests; a suite whose tests are all switched off passes false and skips
// the build. what names the suite in a build failure.
func Main(m *testing.M, what string, bin *string, build bool) int {
	// The sim honours CUDA_VISIBLE_DEVICES as CUDA does: one exported on a
	// GPU machine would hide fake GPUs from every sim a test starts, and
	// fail those whose tp does not fit. The tests start from a host whose
	// GPUs are all visible, and set the variable where they mean to.
	os.Unsetenv("CUDA_VISIBLE_DEVICES")
	if !build {
		return m.Run()
	}
	path, cleanup, err := Build()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		return 1
	}
	defer cleanup()
	*bin = path
	return m.Run()
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// moduleRoot walks up from the working directory (a package's folder
// under go test) to the folder holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("finding the module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// goTool is the go command of the toolchain running the tests, so the
// binary is built by the same Go as the tests even when PATH differs.
func goTool() string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}

// SyncBuffer collects a child process's output while a test reads it:
// exec copies into it from its own goroutine.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
