package orchestrator

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/remote"
)

// dropAfterHost runs every command on this machine but answers the first
// start (the command that launches a detached process) with a dropped
// link, after the command has run: the link died on the way back, as when
// sshd is killed while Start waits for the pid file. With waitEnd, it
// answers only once the started process has ended, as a short sweep does
// before the link comes back.
type dropAfterHost struct {
	*remote.Local
	pidFile string
	waitEnd bool

	mu     sync.Mutex
	starts int
}

func (h *dropAfterHost) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	out, errOut, err := h.Local.Run(ctx, cmd)
	if !strings.Contains(cmd, "setsid") {
		return out, errOut, err
	}
	h.mu.Lock()
	h.starts++
	first := h.starts == 1
	h.mu.Unlock()
	if !first {
		return out, errOut, err
	}
	for h.waitEnd {
		alive, aerr := remote.Alive(ctx, h.Local, h.pidFile)
		if aerr != nil {
			return nil, nil, aerr
		}
		if !alive {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, nil, fmt.Errorf("local: starting: %w", remote.ErrDisconnected)
}

// TestStartOverLinkStartsOnce: a process whose start lost the link but
// ran is not started a second time when the link is back, whether it still
// runs or has already ended (a second sweep would append its records to the
// first one's requests.jsonl).
func TestStartOverLinkStartsOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		command string
		waitEnd bool
	}{
		{"ended before the link came back", "true", true},
		{"still running when the link came back", "sleep 30", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			h := &dropAfterHost{Local: remote.NewLocal(), pidFile: pidFile, waitEnd: tt.waitEnd}
			o := &orch{now: time.Now, emit: func(Event) {}, linkPatience: 30 * time.Second}
			w := &worker{o: o, h: h}
			spec := remote.ProcessSpec{Command: tt.command, Dir: dir, LogFile: filepath.Join(dir, "log"), PIDFile: pidFile}
			err := w.startOverLink(context.Background(), "a", spec)
			defer remote.Stop(context.Background(), h.Local, pidFile, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if h.starts != 1 {
				t.Errorf("started %d times, want once", h.starts)
			}
		})
	}
}

// TestStartOverLinkStartsWhatNeverStarted: a start whose link dropped
// before the process was launched starts it once the link is back.
func TestStartOverLinkStartsWhatNeverStarted(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	h := &dropBeforeHost{Local: remote.NewLocal()}
	o := &orch{now: time.Now, emit: func(Event) {}, linkPatience: 30 * time.Second}
	w := &worker{o: o, h: h}
	spec := remote.ProcessSpec{Command: "sleep 30", Dir: dir, LogFile: filepath.Join(dir, "log"), PIDFile: pidFile}
	err := w.startOverLink(context.Background(), "a", spec)
	defer remote.Stop(context.Background(), h.Local, pidFile, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if alive, err := remote.Alive(context.Background(), h.Local, pidFile); err != nil || !alive {
		t.Errorf("after the link came back the process runs: %v (%v), want true", alive, err)
	}
}

// dropBeforeHost answers the first start with a dropped link without
// running it.
type dropBeforeHost struct {
	*remote.Local
	mu      sync.Mutex
	dropped bool
}

func (h *dropBeforeHost) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	h.mu.Lock()
	drop := !h.dropped && strings.Contains(cmd, "setsid")
	h.dropped = h.dropped || drop
	h.mu.Unlock()
	if drop {
		return nil, nil, fmt.Errorf("local: starting: %w", remote.ErrDisconnected)
	}
	return h.Local.Run(ctx, cmd)
}
