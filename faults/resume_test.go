package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// killSeeds fix the moments the orchestrator is killed, so a failure can be
// replayed; each seed is one campaign killed killsPerSeed times.
var killSeeds = []uint64{1, 2, 3}

const killsPerSeed = 3

// killWindow is the range of journal lines (counted from the start of each
// run) after which a kill lands: about one scenario's worth, so kills fall
// in every phase of both scenarios across the seeds.
const killWindow = 24

// TestKillAndResume SIGKILLs `bakeoff run` at seeded random moments (after a
// random number of journal lines, plus a random delay that lands inside a
// phase), resumes each time, and finally resumes to the end: every scenario
// must end exactly once, with all its requests on disk, and the servers the
// killed orchestrators left running must be stopped.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	needCampaignFaults(t)
	for _, seed := range killSeeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			s := spec{name: "resume", scenarios: []scen{{name: "a"}, {name: "b"}}}
			cfg := r.write(s)
			out := filepath.Join(r.dir, "run")
			rng := rand.New(rand.NewPCG(seed, seed*7919))
			kills := 0
			for i := range killsPerSeed {
				args := []string{"run", cfg, "--out", out}
				if i > 0 {
					args = []string{"run", cfg, "--resume", out}
				}
				lines := 1 + rng.IntN(killWindow)
				delay := time.Duration(rng.IntN(400)) * time.Millisecond
				if r.killAfter(args, out, lines, delay) {
					kills++
				}
			}
			t.Logf("seed %d: %d of %d runs killed mid-campaign", seed, kills, killsPerSeed)
			res := r.bakeoff("run", cfg, "--resume", out)
			if res.code != 0 {
				t.Fatalf("final resume: want exit 0, got %s", res)
			}
			r.checkEndState(out, s, nil)
		})
	}
}

// killAfter starts bakeoff, waits until the journal has grown by lines
// entries, sleeps delay and SIGKILLs it. It reports whether the kill landed
// before the run ended by itself.
func (r *rig) killAfter(args []string, runDir string, lines int, delay time.Duration) bool {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	before := len(journal(r.t, runDir))
	cmd, _, stderr := r.command(ctx, args...)
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(runTimeout)
	for len(journal(r.t, runDir)) < before+lines && time.Now().Before(deadline) {
		select {
		case <-done:
			r.t.Logf("run ended by itself before %d journal lines: %s", lines, stderr)
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	select {
	case <-done:
		return false
	case <-time.After(delay):
	}
	// Only the orchestrator dies: servers and sweeps it started detached
	// live on, as they would on a real host.
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return true
}
