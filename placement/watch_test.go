package placement

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/sshdtest"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// runOnly is a host that can only be asked to run commands, as every host
// was before hosts could be pinged.
type runOnly struct{ remote.Host }

// TestAnswers: a host is there when its sshd answers, however long its
// login shell takes to start. The hosts are real sshds on 127.0.0.1 whose
// login shell is stuck in ~/.bashrc for the whole test, as a pyenv init on
// a stale lock or a hung NFS home leaves it.
func TestAnswers(t *testing.T) {
	dir := t.TempDir()
	released := filepath.Join(dir, "released")
	rc := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done\n", remote.Quote(released))
	stuck := sshdtest.StartWith(t, sshdtest.Options{ShellRC: rc})
	gone := sshdtest.Start(t)
	// Before the sshds stop: the stuck shells end on their own.
	t.Cleanup(func() { os.WriteFile(released, nil, 0o644) })
	dial := func(s *sshdtest.Server) *remote.SSH {
		h, err := remote.DialSSH(context.Background(), remote.SSHOptions{Target: s.Alias, ConfigFile: s.ConfigFile,
			Getenv: s.Getenv, ConnectTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("connecting to %s: %v", s.Alias, err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	slowShell, goneHost := dial(stuck), dial(gone)
	gone.Kill()

	// A host that is there answers at once; the patience only bounds how
	// long one that is not is waited for, so it is short there.
	const there, notThere = time.Minute, time.Second
	for _, tc := range []struct {
		name     string
		h        remote.Host
		patience time.Duration
		want     bool
		wantErr  string // in the error of a host that is not there
	}{
		{"sshd answers, login shell stuck", slowShell, there, true, ""},
		// What the same host looked like when only a command could tell.
		{"login shell stuck, commands only", runOnly{slowShell}, notThere, false, "deadline exceeded"},
		{"sshd gone", goneHost, notThere, false, gone.Alias},
		{"this machine", remote.NewLocal(), there, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := answers(context.Background(), Env{}, tc.h, tc.patience)
			if ok := err == nil; ok != tc.want {
				t.Fatalf("answers = %v, want it there: %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want it to say %q", err, tc.wantErr)
			}
		})
	}
}

// clockedPinger fails every ping, moving a fake clock on by the next of
// its steps, and records how long each ping was given.
type clockedPinger struct {
	remote.Host
	now   time.Time
	steps []time.Duration
	given []time.Duration
}

func (p *clockedPinger) Ping(ctx context.Context) error {
	d, _ := ctx.Deadline()
	p.given = append(p.given, time.Until(d))
	p.now = p.now.Add(p.steps[0])
	p.steps = p.steps[1:]
	return fmt.Errorf("no answer")
}

// TestAnswersKeepsToThePatience: a try that used most of the patience
// leaves the next only the rest of it, so a host that never answers is
// given up on after about link_patience, not twice it.
func TestAnswersKeepsToThePatience(t *testing.T) {
	p := &clockedPinger{Host: remote.NewLocal(), now: time.Unix(1e9, 0), steps: []time.Duration{9 * time.Minute, 2 * time.Minute}}
	err := answers(context.Background(), Env{Now: func() time.Time { return p.now }}, p, 10*time.Minute)
	if err == nil || !strings.Contains(err.Error(), "unreachable for 10m0s") {
		t.Fatalf("answers = %v, want unreachable for the patience", err)
	}
	if len(p.given) != 2 || p.given[0] > 10*time.Minute || p.given[0] < 9*time.Minute || p.given[1] > time.Minute {
		t.Errorf("the tries were given %v, want about 10m and then at most the 1m left", p.given)
	}
}
