package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestPreflight: the preflight runs on the allocated node, where the
// engine is: a flag the engine (the sim, uploaded to the node) does not
// take, in the last scenario, stops the campaign before any launch with
// exit 2 and the flag's line, and the allocation is released.
func TestPreflight(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	cfg := r.write(spec{bArgs: map[string]any{"speculative-eagle-top-k": 4}})
	code, p := r.run("run", cfg)
	if code != 2 {
		t.Fatalf("bakeoff run: exit %d, want 2\n%s", code, p)
	}
	want := filepath.Join("scenarios", "b.yaml") + ":"
	if !strings.Contains(p.stderr.String(), want) ||
		!strings.Contains(p.stderr.String(), "scenario b: unknown flag --speculative-eagle-top-k; the closest it accepts is --speculative-eagle-topk") {
		t.Errorf("the run does not name the flag at its line\n%s", p)
	}
	id := jobOf(t, p)
	if !strings.Contains(p.stderr.String(), "slurm: released job "+id) {
		t.Errorf("bakeoff did not say it released job %s\n%s", id, p)
	}
	es, err := orchestrator.ReadJournal(filepath.Join(r.runDirOf(), results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	asked := false
	for _, e := range es {
		switch orchestrator.StepName(e.Phase) {
		case orchestrator.StepLock, orchestrator.StepPrepare:
		case orchestrator.StepPreflight:
			asked = true
		default:
			if e.Phase != orchestrator.PhaseAllocation {
				t.Errorf("journal: %+v after a failed preflight", e)
			}
		}
	}
	if !asked {
		t.Error("the journal has no preflight on the node")
	}
	r.checkNoJobs()
}
