package faults

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestServerFaultsLoadAndRun runs one campaign whose servers fail the ways
// real SGLang servers have been seen to fail while starting and serving,
// between two healthy ones: each faulty scenario fails in its own phase
// with a reason, the healthy ones measure every request, and no process is
// left on the host. A fault that leaked into the next scenario would show
// as that scenario failing.
func TestServerFaultsLoadAndRun(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := spec{
		name: "server-faults-run",
		scenarios: []scen{
			{name: "first"},
			{name: "die-load", args: map[string]any{"sim-fault": "die-during-load"}},
			{name: "crash-smoke", args: map[string]any{"sim-fault": "crash-on-first-request"}},
			{name: "crash-after", args: map[string]any{"sim-fault": "crash-after=4"}},
			{name: "last"},
		},
	}
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	res := r.bakeoff("run", cfg, "--out", out)
	if res.code != 1 {
		t.Fatalf("want exit 1 (scenarios failed), got %s", res)
	}
	r.checkEndState(out, s, map[string]outcome{
		"die-load":    {status: results.StatusFailed, phase: "ready"},
		"crash-smoke": {status: results.StatusFailed, phase: "smoke", reason: "Traceback"},
		"crash-after": {status: results.StatusFailed, phase: "sweep"},
	})
	for _, name := range []string{"die-load", "crash-smoke", "crash-after"} {
		if !strings.Contains(res.stdout, "FAILED "+name) {
			t.Errorf("the run's report does not name the failure of %s:\n%s", name, res.stdout)
		}
	}
}

// TestServerFaultsStop runs servers that are hard to stop: one ignores
// SIGTERM until it is killed (the stop must escalate to SIGKILL and the
// next launch find the port free), one orphans its scheduler out of the
// process group (the stop finds it through its ancestry; kill_strays is the
// GPU wait's last resort), one keeps its memory held after exit (the next
// GPU wait must see it go before launching). Every scenario completes.
//
// Nothing here races two timers: the first server never leaves on its own,
// so whether it needed SIGKILL is the stop's doing alone, and the GPU wait
// outlasts the held memory by far more than a loaded host's slow polls.
func TestServerFaultsStop(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := spec{
		name: "server-faults-stop",
		scenarios: []scen{
			{name: "ignore-term", args: map[string]any{"sim-fault": "ignore-sigterm"}},
			{name: "orphans", args: map[string]any{"sim-fault": "orphan-children"}},
			{name: "hold-memory", args: map[string]any{"sim-fault": "hold-memory=4s"}},
			{name: "last"},
		},
		killStrays: true,
		gpuWait:    "1m",
	}
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	res := r.bakeoff("run", cfg, "--out", out)
	if res.code != 0 {
		t.Fatalf("want exit 0, got %s", res)
	}
	r.checkEndState(out, s, nil)
	// The server that outlasts the grace is killed, journaled and warned
	// about; the ones that exit on SIGTERM get it once.
	entries, err := orchestrator.ReadJournal(filepath.Join(out, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"ignore-term": {"TERM", "KILL"}, "last": {"TERM"}}
	for _, e := range entries {
		if e.Event != orchestrator.EventStopped || e.Phase != "stop" || e.Stop == nil || e.Stop.PIDFile != "server.pid" {
			continue
		}
		if sig, ok := want[e.Scenario]; ok {
			if !slices.Equal(e.Stop.Signals, sig) {
				t.Errorf("%s's server stopped with %v, want %v", e.Scenario, e.Stop.Signals, sig)
			}
			delete(want, e.Scenario)
		}
	}
	if len(want) > 0 {
		t.Errorf("no stop journaled for %v", want)
	}
	if !strings.Contains(res.stdout+res.stderr, "did not exit within stop_grace 3s of SIGTERM and was killed (SIGKILL)") {
		t.Errorf("no warning that ignore-term needed SIGKILL:\n%s", res)
	}
}
