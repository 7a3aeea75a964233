package faults

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
)

// TestServerFaults runs one campaign whose servers misbehave in every way a
// real SGLang server has been seen to, between two healthy ones: each
// faulty scenario fails in its own phase with a reason (or, for the slow
// stops, completes), the healthy ones measure every request, and no process
// is left on the host. One campaign keeps the suite fast; a fault that
// leaks into the next scenario shows as that scenario failing.
func TestServerFaults(t *testing.T) {
	r := newRig(t)
	r.local = true
	s := spec{
		name: "server-faults",
		scenarios: []scen{
			{name: "first"},
			{name: "die-load", args: map[string]any{"sim-fault": "die-during-load"}},
			{name: "crash-smoke", args: map[string]any{"sim-fault": "crash-on-first-request"}},
			{name: "crash-after", args: map[string]any{"sim-fault": "crash-after=4"}},
			// Drains for 6 s after SIGTERM, longer than stop_grace: the stop
			// must escalate to SIGKILL and the next launch find the port free.
			{name: "ignore-term", args: map[string]any{"sim-fault": "ignore-sigterm=6s"}},
			{name: "orphans", args: map[string]any{"sim-fault": "orphan-children"}},
			// Keeps its "GPU memory" 4 s after exit: the next scenario's
			// gpu-free wait must see it go before launching.
			{name: "hold-memory", args: map[string]any{"sim-fault": "hold-memory=4s"}},
			{name: "last"},
		},
		// The orphaned scheduler left a process group that the stop
		// cannot reach; the GPU wait finds it holding memory and may kill
		// it only when told to.
		killStrays: true,
		gpuWait:    "8s",
	}
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	res := r.bakeoff("run", cfg, "--out", out)
	if res.code != 1 {
		t.Fatalf("want exit 1 (scenarios failed), got %s", res)
	}
	want := map[string]outcome{
		"die-load":    {status: results.StatusFailed, phase: "ready"},
		"crash-smoke": {status: results.StatusFailed, phase: "smoke", reason: "Traceback"},
		"crash-after": {status: results.StatusFailed, phase: "sweep"},
	}
	r.checkEndState(out, s, want)
	for _, name := range []string{"die-load", "crash-smoke", "crash-after"} {
		if !strings.Contains(res.stdout, "FAILED "+name) {
			t.Errorf("the run's report does not name the failure of %s:\n%s", name, res.stdout)
		}
	}
}
