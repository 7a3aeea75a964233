package orchestrator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/campaigntest"
	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/placement"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestDeploymentLostHost cuts the link to rank 1's host while the two ranks
// of a deployment load, after a single server was measured in the same
// round. The launch fails within the link patience, not the health timeout
// (two minutes here, thirty by default), as its host's failure naming rank
// 1's host; rank 0 is stopped on the host that still answers and its log
// kept; the single server's measurement stands. Once the link is back, the
// campaign resumed runs only the ranks, stopping what the cut left on rank
// 1's host first, and leaves nothing on either.
func TestDeploymentLostHost(t *testing.T) {
	campaigntest.Need(t, "BAKEOFF_FAULTS", "campaigns over namespace hosts", "make faults; .ci/run does")
	r := newNodesRig(t)
	r.ranksScenario("ranks")
	r.scenario("single", "")
	const patience = 10 * time.Second
	// The health timeout is far beyond what the test waits: a launch that
	// waited it out for the lost rank would fail the test on time.
	r.config(campaignOpts{scenarios: []string{"single", "ranks"}, speed: 20, concurrency: "[2]", healthTimeout: "2m"})
	a, b := r.hosts[0], r.hosts[1]
	watch := &placement.Fleet{LinkPatience: patience} // what `bakeoff run` watches a fleet with
	dir := filepath.Join(r.root, "run")

	var once sync.Once
	var mu sync.Mutex
	var cut, readyEnd time.Time
	var readyErr error
	out, _, err := r.runInProcess(context.Background(), orchestrator.Options{Hosts: r.connect(), OutDir: dir, Watch: watch,
		Events: func(e orchestrator.Event) {
			// Rank 1 started, its model loading: its host goes.
			if e.Kind == orchestrator.EventWaiting && strings.HasPrefix(e.Message, "ranks.1 started") {
				once.Do(func() {
					b.LinkDown()
					mu.Lock()
					cut = time.Now()
					mu.Unlock()
				})
			}
			if e.Kind == orchestrator.EventPhaseEnd && e.Scenario == "ranks" && e.Phase == orchestrator.StepReady {
				mu.Lock()
				readyEnd, readyErr = time.Now(), e.Err
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if cut.IsZero() {
		t.Fatal("rank 1 was never seen to start")
	}
	// Rank 1's process may run on behind the cut link; every role on the
	// host that answers was stopped.
	r.hostClean(a)

	if readyEnd.IsZero() || readyErr == nil {
		t.Fatalf("the ranks' ready phase ended at %v with %v, want it failed", readyEnd, readyErr)
	}
	// The cut is noticed within the SSH keepalive (3 s), then the watcher
	// waits the patience out; the rest is slack for a loaded machine.
	if took := readyEnd.Sub(cut); took > patience+40*time.Second {
		t.Errorf("the launch took %s after the cut to fail, want about the link patience %s", took.Round(time.Second), patience)
	}
	if want := "role ranks.1 on " + b.Alias + ": " + b.Alias + " stopped answering"; !strings.Contains(readyErr.Error(), want) {
		t.Errorf("ready failed with %q, want it to say %q", readyErr, want)
	}

	run := readSummary(t, dir)
	single := scenarioResult(t, run, "single")
	if single.Status != results.StatusOK || len(single.Levels) != 1 {
		t.Fatalf("single: %s with %d levels (%s), want measured", single.Status, len(single.Levels), single.Reason)
	}
	singleRecs, err := run.Records("single")
	if err != nil || len(singleRecs) == 0 {
		t.Fatalf("single's records: %d (%v)", len(singleRecs), err)
	}
	ranks := scenarioResult(t, run, "ranks")
	if ranks.Status != results.StatusPending || ranks.FailedPhase != string(orchestrator.StepReady) ||
		!strings.Contains(ranks.Reason, b.Alias+", a node of its group") {
		t.Errorf("ranks: %s at %s (%s), want the ready phase lost with its node %s", ranks.Status, ranks.FailedPhase, ranks.Reason, b.Alias)
	}
	if len(out.Lost) != 1 || out.Lost[0].Host != a.Alias || out.Lost[0].Round != 1 || !strings.Contains(out.Lost[0].Reason, b.Alias) {
		t.Errorf("lost %+v, want the group of %s in round 1, naming %s", out.Lost, a.Alias, b.Alias)
	}
	// single's launch of round 1 was measured before the loss and is kept:
	// the round is unfinished, and the end of the run must not call it unrun.
	if want := "round 1 not finished"; !strings.Contains(out.Stopped, want) || strings.Contains(out.Stopped, "not run") {
		t.Errorf("stopped %q, want %q and no round called not run", out.Stopped, want)
	}
	outcomes := map[string]string{}
	for _, e := range out.Journal {
		if e.Phase == orchestrator.PhaseScenario && e.Event == "end" {
			outcomes[e.Scenario] = e.Outcome
		}
	}
	if outcomes["single"] != orchestrator.OutcomeOK || outcomes["ranks"] != orchestrator.OutcomeHostLost {
		t.Errorf("journal outcomes %v, want single ok and ranks host-lost", outcomes)
	}
	// Rank 0's log is the one the host that answers can give.
	if fi, err := os.Stat(filepath.Join(dir, "ranks", "round-1", "roles", "ranks.0", results.ServerLog)); err != nil || fi.Size() == 0 {
		t.Errorf("no log of ranks.0: %v", err)
	}

	// The link back, the campaign resumed. The first campaign's process
	// would have exited by now and its lock on the lost host would be
	// taken over as stale; both run in this test's process, so the lock
	// goes by hand.
	b.LinkUp()
	if err := os.Remove(filepath.Join(strings.ReplaceAll(r.workdir, "{host}", b.Alias), "bakeoff.lock")); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	out, _, err = r.runInProcess(context.Background(), orchestrator.Options{Hosts: r.connect(), ResumeDir: dir, Watch: watch})
	if err != nil {
		t.Fatal(err)
	}
	r.nothingLeft()
	if len(out.Results) != 1 || out.Results[0].Name != "ranks" || out.Results[0].Status != results.StatusOK {
		for _, res := range out.Results {
			t.Logf("%s: %s at %s: %s", res.Name, res.Status, res.FailedPhase, res.Reason)
		}
		t.Fatalf("the resumed campaign ran %d launches, want the ranks alone, measured", len(out.Results))
	}
	run = readSummary(t, dir)
	if s := scenarioResult(t, run, "single"); s.Status != results.StatusOK || !s.Started.Equal(single.Started) {
		t.Errorf("single after the resume: %s, started %v; want the first campaign's measurement (started %v)", s.Status, s.Started, single.Started)
	}
	if recs, err := run.Records("single"); err != nil || len(recs) != len(singleRecs) {
		t.Errorf("single's records after the resume: %d (%v), want the %d measured first", len(recs), err, len(singleRecs))
	}
}

// hostClean fails the test unless h comes to hold no process but sshd.
func (r *nodesRig) hostClean(h *testhost.Host) {
	r.t.Helper()
	if ps := r.leftOn(h); len(ps) > 0 {
		r.t.Fatalf("processes left on %s: %+v", h.Alias, ps)
	}
}
