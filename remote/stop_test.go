package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
