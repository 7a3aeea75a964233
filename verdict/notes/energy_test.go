package notes_test

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestEnergyNotAvailable: GPUs that report no power give no energy figure
// and one note, however many launches say so.
func TestEnergyNotAvailable(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 4}
	ls := verdicttest.Campaign([]verdicttest.Engine{verdicttest.Baseline, verdicttest.Eagle3TopK4}, s, 2, 3)
	in := verdicttest.CampaignInput([]string{"baseline", "eagle"}, s, 2, ls)
	for _, name := range []string{"baseline", "eagle"} {
		for i := range in.Launches[name] {
			in.Launches[name][i].Power = &measure.PowerLog{Source: "nvidia-smi", GPUs: []int{0},
				Unavailable: "nvidia-smi reports no power draw for GPU 0 ([N/A])"}
		}
	}
	v, err := judge.Records(in, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.HasEnergy() {
		t.Error("energy figures from GPUs that report no power")
	}
	n := 0
	for _, note := range v.Notes {
		if note.Check == verdict.CheckEnergy {
			n++
			if !strings.Contains(note.Text, "[N/A]") || note.Severity != verdict.SeverityInfo {
				t.Errorf("note %+v", note)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d energy notes, want 1: %+v", n, v.Notes)
	}
}
