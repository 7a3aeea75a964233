package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestDeploymentFaults runs TestDeployment's two ranks over both nodes of a
// two-node allocation with a fault in each campaign, one campaign after the
// other on one cluster: rank 1 killed in the middle of a level, then the
// run interrupted while the ranks load. Nothing is left on either node
// after either (the rig's final check).
func TestDeploymentFaults(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	t.Run("rank 1 killed mid-level", func(t *testing.T) { testRankKilled(t, rigOn(t, c)) })
	t.Run("interrupted while loading", func(t *testing.T) { testInterruptedLoading(t, rigOn(t, c)) })
}

// ranksScenario writes scenario b as TestDeployment's two ranks, one on
// each node, with more args.
func (r *rig) ranksScenario(more map[string]any) {
	r.t.Helper()
	args := map[string]any{"tp": 2, "watchdog-timeout": 30}
	for k, v := range more {
		args[k] = v
	}
	r.writeYAML(filepath.Join("scenarios", "b.yaml"), map[string]any{
		"name": "b", "engine": "sglang", "model": "/models/sim", "args": args,
		"deployment": map[string]any{"roles": map[string]any{"ranks": map[string]any{
			"count": 2, "node": []int{0, 1},
			"args": map[string]any{"nnodes": "{count}", "node-rank": "{index}", "dist-init-addr": "{ranks.host}:{rendezvous}"},
		}}},
	})
}

// testRankKilled kills rank 1's sim by pid once the first level of b's
// first sweep has started: that launch fails at the sweep with rank 1's
// reason, naming the role and its node, and every other launch of the
// campaign is measured and kept.
func testRankKilled(t *testing.T, r *rig) {
	cfg := r.write(spec{rounds: 2, nodes: 2})
	// A level of over a second (unslowed, its 4 requests take some 15 ms):
	// still running when the kill lands.
	r.ranksScenario(map[string]any{"sim-slowdown": 100})
	p := r.start("run", cfg)
	events := filepath.Join(r.c.Host.Dir, "work-*", "sweeps", "b", "events.log")
	var node string
	r.waitFor(p, "rank 1 seen in a level of b's sweep", func() bool {
		files, _ := filepath.Glob(events)
		if len(files) == 0 {
			return false
		}
		ev, _ := os.ReadFile(files[0])
		if !strings.Contains(string(ev), `"level_start"`) {
			return false
		}
		for _, n := range r.c.Nodes {
			ps, _ := n.Host.Processes(context.Background())
			for _, pr := range ps {
				// The sim itself (the binary uploaded to the node), not the
				// shell that started it.
				if pr.Comm == "bakeoff" && strings.Contains(pr.Cmdline, " sim ") && strings.Contains(pr.Cmdline, "--node-rank 1") {
					if err := syscall.Kill(pr.Pid, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					node = n.Name
					return true
				}
			}
		}
		return false
	})
	t.Logf("killed rank 1 on %s", node)
	code := p.wait(t)
	runDir := r.runDirOf()
	run, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	var failed int
	for _, s := range run.Summary.Scenarios {
		if s.Name == "b" && s.Status == results.StatusFailed {
			failed++
			if s.FailedPhase != string(orchestrator.StepSweep) {
				t.Errorf("b round %d failed at %s (%s), want at the sweep", s.RoundOf(), s.FailedPhase, s.Reason)
			}
			if want := "role ranks.1 on " + node + ": server exited during the sweep"; !strings.HasPrefix(s.Reason, want) {
				t.Errorf("b round %d: reason %q, want it to start %q\n%s", s.RoundOf(), s.Reason, want, p)
			}
			continue
		}
		if s.Status != results.StatusOK {
			t.Errorf("%s round %d: %s at %s (%s), want measured", s.Name, s.RoundOf(), s.Status, s.FailedPhase, s.Reason)
		}
	}
	if failed != 1 {
		t.Errorf("%d failed launches of b, want the one whose rank was killed (exit %d)\n%s", failed, code, p)
	}
	if n := len(run.Summary.Scenarios); n != 4 {
		t.Errorf("%d launches in the summary, want 2 scenarios × 2 rounds (exit %d)\n%s", n, code, p)
	}
	r.checkNoJobs()
}

// testInterruptedLoading sends SIGINT once rank 1 has started and the
// ranks still load: the run stops at once, says it was interrupted, and
// cancels its job; the rig's final check finds both ranks stopped.
func testInterruptedLoading(t *testing.T, r *rig) {
	cfg := r.write(spec{nodes: 2})
	// A minute's load in wall time: the interruption lands while loading.
	r.ranksScenario(map[string]any{"sim-load-time": "3000s"})
	p := r.start("run", cfg)
	// The progress lines, unlike the allocation's, are on stdout.
	r.waitFor(p, `printing "ranks.1 started on"`, func() bool { return strings.Contains(p.stdout.String(), "ranks.1 started on ") })
	id := jobOf(t, p)
	sent := time.Now()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	checkInterrupted(t, r, p, "", "", id)
	// Well short of the load: the ranks are stopped, not waited for.
	if d := time.Since(sent); d > 20*time.Second {
		t.Errorf("bakeoff took %s to stop after SIGINT\n%s", d.Round(time.Second), p)
	}
	if !strings.Contains(p.stdout.String(), "Interrupted.") {
		t.Errorf("bakeoff did not say it was interrupted\n%s", p)
	}
	r.checkNoJobs()
}
