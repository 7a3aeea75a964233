package campaigntest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name       string
		script     string
		wantCode   int
		wantExited bool
	}{
		{"success", "exit 0", 0, true},
		{"failure", "exit 3", 3, true},
		{"killed by a signal", "kill -KILL $$", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, exited := ExitCode(exec.Command("sh", "-c", tc.script).Run())
			if code != tc.wantCode || exited != tc.wantExited {
				t.Errorf("ExitCode = %d, %v; want %d, %v", code, exited, tc.wantCode, tc.wantExited)
			}
		})
	}
}

// TestInGroupKillsTheGroup cancels a shell whose child sleeps: the child
// goes with it, as a campaign's ssh clients and local sims must. The child
// holds the output pipe, so Wait returns only once it is gone too; a child
// left alive hangs the test.
func TestInGroupKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := InGroup(exec.CommandContext(ctx, "sh", "-c", "sleep 600 & echo started; wait"))
	var out testbin.SyncBuffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	Until(context.Background(), nil, 10*time.Millisecond, func() bool { return strings.Contains(out.String(), "started") })
	cancel()
	if _, exited := ExitCode(cmd.Wait()); exited {
		t.Fatal("the shell exited by itself; want it killed")
	}
}

func TestUntil(t *testing.T) {
	done := make(chan struct{})
	close(done)
	if Until(context.Background(), done, time.Millisecond, func() bool { return false }) {
		t.Error("Until held after done closed, with cond never true")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Until(ctx, nil, time.Millisecond, func() bool { return false }) {
		t.Error("Until held after ctx ended, with cond never true")
	}
	n := 0
	if !Until(context.Background(), nil, time.Millisecond, func() bool { n++; return n == 3 }) {
		t.Error("Until gave up on a cond that came to hold")
	}
}

func TestWaitJournal(t *testing.T) {
	runDir := t.TempDir()
	sweep := func(e orchestrator.JournalEntry) bool { return e.Phase == "sweep" && e.Event == "start" }
	if JournalHas(runDir, sweep) {
		t.Fatal("a run without a journal holds an entry")
	}
	line := `{"time":"2026-01-01T00:00:00Z","scenario":"a","phase":"sweep","event":"start"}` + "\n"
	if err := os.WriteFile(filepath.Join(runDir, results.JournalFile), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if !WaitJournal(context.Background(), runDir, nil, sweep) {
		t.Error("WaitJournal missed the sweep's start")
	}
}

func TestNewDirAndWriteYAML(t *testing.T) {
	dir := NewDir(t)
	p := WriteYAML(t, dir, filepath.Join("configs", "c.yaml"), map[string]any{"campaign": "c", "rounds": 2})
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "campaign: c\nrounds: 2\n"; got != want {
		t.Errorf("configs/c.yaml = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "scenarios")); err != nil {
		t.Error(err)
	}
}
