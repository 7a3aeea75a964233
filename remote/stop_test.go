package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingHost counts the commands run on it: each is an SSH session and a
// login shell on a real host.
type countingHost struct {
	Host
	runs atomic.Int32
}

func (h *countingHost) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	h.runs.Add(1)
	return h.Host.Run(ctx, cmd)
}

// TestStopCommands: Stop takes two commands on the host, however long the
// server takes to go, whether it obeys SIGTERM or needs SIGKILL, and when
// there is nothing to stop; the process tree is gone and the pid file with
// it.
func TestStopCommands(t *testing.T) {
	for _, tt := range []struct {
		name string
		// cmd is the server; "" writes a pid file naming a dead process.
		cmd   string
		grace time.Duration
	}{
		{"leaves on SIGTERM after a while", `trap 'sleep 1; exit 0' TERM; sleep 300 & wait; sleep 300 & wait`, 5 * time.Second},
		{"ignores SIGTERM", `trap '' TERM; sh -c 'trap "" TERM; while :; do sleep 1; done' & while :; do sleep 1; done`, 500 * time.Millisecond},
		{"a child in its own session", `setsid sh -c 'exec sleep 300' & sleep 300`, 2 * time.Second},
		{"already gone", "", time.Second},
		{"no pid file", "none", time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			dir := t.TempDir()
			h := &countingHost{Host: NewLocal()}
			pidFile := filepath.Join(dir, "server.pid")
			var pid int
			switch tt.cmd {
			case "none":
			case "":
				if err := os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n", 1<<22-3)), 0o600); err != nil {
					t.Fatal(err)
				}
			default:
				var err error
				pid, err = Start(ctx, NewLocal(), ProcessSpec{Command: tt.cmd, LogFile: filepath.Join(dir, "log"), PIDFile: pidFile})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { Stop(context.Background(), NewLocal(), pidFile, 0) })
				waitFor(t, "the server's children", func() bool {
					m, _ := groupMembers(ctx, NewLocal(), pid)
					return len(m) >= 2
				})
			}
			if err := Stop(ctx, h, pidFile, tt.grace); err != nil {
				t.Fatal(err)
			}
			if n := h.runs.Load(); n > 2 {
				t.Errorf("Stop ran %d commands on the host, want at most 2", n)
			}
			if pid > 0 {
				if m, _ := groupMembers(ctx, NewLocal(), pid); len(m) > 0 {
					t.Errorf("processes %v of group %d survived Stop", m, pid)
				}
			}
			if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
				t.Errorf("pid file left behind: %v", err)
			}
		})
	}
}

// TestStopSignalsOnce: every process of the group gets SIGTERM once. A
// server that takes a second SIGTERM for a second Ctrl-C (llama-server's
// handler exits from inside the signal handler then, and can hang there)
// must never see one from a stop; the stop says what it sent, and that a
// server that ignores SIGTERM needed SIGKILL.
func TestStopSignalsOnce(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash counts each signal it traps; dash may fold two into one")
	}
	for _, tt := range []struct {
		name    string
		server  string // bash; $T is the file each trapped TERM is logged to
		grace   time.Duration
		signals []string
	}{
		{"exits on SIGTERM", `trap 'echo TERM >> "$T"; (sleep 0.3; kill -s USR1 $$) &' TERM; trap 'exit 0' USR1; while :; do sleep 1 & wait $!; done`,
			5 * time.Second, []string{"TERM"}},
		{"ignores SIGTERM", `trap 'echo TERM >> "$T"' TERM; while :; do sleep 1 & wait $!; done`,
			500 * time.Millisecond, []string{"TERM", "KILL"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "server.pid")
			traps := filepath.Join(dir, "traps")
			cmd := "T=" + Quote(traps) + " exec bash -c " + Quote(tt.server)
			pid, err := Start(ctx, NewLocal(), ProcessSpec{Command: cmd, LogFile: filepath.Join(dir, "log"), PIDFile: pidFile})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { Stop(context.Background(), NewLocal(), pidFile, 0) })
			waitFor(t, "the server's sleep", func() bool {
				m, _ := groupMembers(ctx, NewLocal(), pid)
				return len(m) >= 2
			})
			st, err := StopReport(ctx, NewLocal(), pidFile, tt.grace)
			if err != nil {
				t.Fatal(err)
			}
			if st.PID != pid || !slices.Equal(st.Signals, tt.signals) || len(st.Waits) != len(tt.signals) {
				t.Errorf("stop of %d: %+v, want signals %v", pid, st, tt.signals)
			}
			if st.Killed() != (len(tt.signals) == 2) {
				t.Errorf("Killed() = %v for signals %v", st.Killed(), st.Signals)
			}
			if len(st.Waits) > 0 && tt.signals[len(tt.signals)-1] == "TERM" && st.Waits[0] >= tt.grace {
				t.Errorf("the server that exits on SIGTERM was held %s, the whole grace", st.Waits[0])
			}
			got, _ := os.ReadFile(traps)
			if n := strings.Count(string(got), "TERM"); n != 1 {
				t.Errorf("the server trapped SIGTERM %d times, want once", n)
			}
		})
	}
}
