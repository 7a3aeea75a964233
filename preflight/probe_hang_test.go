//go:build unix

package preflight

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// blockRunner answers the commands containing a key of answers at once and
// blocks any other until its ctx ends, as a command that never returns.
type blockRunner map[string]string

func (b blockRunner) Name() string { return "gpu-box" }
func (b blockRunner) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	for k, out := range b {
		if strings.Contains(cmd, k) {
			return []byte(out), nil, nil
		}
	}
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// TestProbeBound: a help command still running at the bound is a
// *CommandError that names it, the host and the bound; one the caller
// stopped first (Ctrl-C) is not said to have hung; a version command that
// hangs leaves the version unknown, not the help.
func TestProbeBound(t *testing.T) {
	help, err := os.ReadFile(filepath.Join("testdata", "vllm-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	const bound = 50 * time.Millisecond
	tests := []struct {
		name      string
		r         blockRunner
		caller    time.Duration // the caller's own deadline; 0: none
		wantHung  bool
		wantError bool
	}{
		{"the help hangs", blockRunner{}, 0, true, true},
		{"the caller stops first", blockRunner{}, bound / 5, false, true},
		{"the version hangs", blockRunner{"--help": string(help)}, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.caller > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.caller)
				defer cancel()
			}
			h, err := Probe(ctx, tt.r, Call{Command: "vllm serve --help", VersionCommand: "vllm --version",
				Format: engine.HelpArgparse, Timeout: bound})
			var ce *CommandError
			var hung *HungError
			switch {
			case (err != nil) != tt.wantError:
				t.Fatalf("got %+v, %v", h, err)
			case !tt.wantError && h.Version != "":
				t.Errorf("version %q from a version command that hung", h.Version)
			case tt.wantError && !errors.As(err, &ce):
				t.Errorf("got %v, want a *CommandError", err)
			case errors.As(err, &hung) != tt.wantHung:
				t.Errorf("got %v, hung: want %v", err, tt.wantHung)
			case tt.wantHung && !strings.Contains(err.Error(), "`vllm serve --help` on gpu-box did not return within 50ms; killed"):
				t.Errorf("got %q", err)
			}
		})
	}
}

// hangingHelp is a help command that never returns and starts a child that
// would outlive it unless its whole process group is killed; each writes
// its pid beside the script.
const hangingHelp = `#!/bin/sh
d=$(dirname "$0")
sleep 600 &
echo $! > "$d/child.pid"
echo $$ > "$d/shell.pid"
sleep 600
`

// TestProbeHungKillsGroup: a help command that never returns, run on this
// machine as the preflight runs it, fails the probe at the bound with an
// error naming it, and neither it nor the child it started is left running.
func TestProbeHungKillsGroup(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "vllm")
	if err := os.WriteFile(script, []byte(hangingHelp), 0o755); err != nil {
		t.Fatal(err)
	}
	pidFiles := []string{filepath.Join(dir, "shell.pid"), filepath.Join(dir, "child.pid")}
	t.Cleanup(func() { killLeft(t, pidFiles) })
	const bound = time.Second
	// The caller's own deadline keeps a probe that ignores its bound from
	// holding the test for the script's ten minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	command := script + " serve --help"
	start := time.Now()
	_, err := Probe(ctx, remote.NewLocal(), Call{Command: command, Dir: dir, Format: engine.HelpArgparse, Timeout: bound})
	took := time.Since(start)
	want := "`" + command + "` on local did not return within 1s; killed"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error containing %q", err, want)
	}
	// The runner waits for the killed group's pipes; a few seconds more on a
	// busy machine, far from the script's ten minutes.
	if took > bound+5*time.Second {
		t.Errorf("took %s with a bound of %s", took, bound)
	}
	for _, f := range pidFiles {
		pid := readPid(t, f)
		if !gone(pid, 5*time.Second) {
			t.Errorf("process %d (%s) still runs after the probe returned", pid, filepath.Base(f))
		}
	}
}

// readPid reads a pid file the script wrote.
func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the script did not write its pid before the bound: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid file %s: %q", file, b)
	}
	return pid
}

// gone waits up to wait for pid to be gone: no such process, or a zombie
// (dead, waiting for a parent that may never reap it: the orphan's new
// parent is whatever this machine's pid 1 is).
func gone(pid int, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if !running(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running reports whether pid is a live process, not a zombie.
func running(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	// /proc/PID/stat: "pid (comm) state ...".
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// Without /proc (macOS) kill's answer stands; with it, the
		// process has just gone.
		_, noProc := os.Stat("/proc/self")
		return noProc != nil
	}
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// killLeft kills, by pid, the processes of the script that still run when
// the test ends (it failed): only those this test started.
func killLeft(t *testing.T, pidFiles []string) {
	for _, f := range pidFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && running(pid) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Logf("killing leftover %d: %v", pid, err)
			}
		}
	}
}
