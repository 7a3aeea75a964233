package rundiff

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// tp8 is a TP8 server; tp4 a TP4 one with 55% of its throughput, more per
// GPU.
var (
	tp8 = verdicttest.Baseline
	tp4 = func() verdicttest.Engine { e := verdicttest.Baseline; e.Slowdown = 1 / 0.55; return e }()
)

// gpuRun writes four rounds of one scenario, x, served by e on gpus GPUs,
// as a run directory; seed draws the noise.
func gpuRun(t *testing.T, e verdicttest.Engine, gpus int, seed uint64) *results.Run {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 10, 70}
	run, err := verdicttest.WriteCampaign(t.TempDir(), []string{"x"}, []verdicttest.Engine{e}, s, 4, seed, map[string]int{"x": gpus}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestDiffPerGPU: a deployment that holds half the GPUs in the new run,
// with 55% of the old one's throughput (a TP8 server replaced by a TP4),
// is compared per GPU: +10% per GPU at every level, an improvement, where
// its whole throughput would read as a 45% regression; the rows say so and
// carry both runs' throughput per GPU. The same deployment on as many GPUs
// in both runs is compared on throughput, as always.
func TestDiffPerGPU(t *testing.T) {
	old := gpuRun(t, tp8, 8, 81)
	smaller := gpuRun(t, tp4, 4, 82)
	// Three runs of history with no run effect: absolute rows are judged.
	history := []*results.Run{old, gpuRun(t, tp8, 8, 84), gpuRun(t, tp8, 8, 85)}
	d, err := Compare(old, smaller, Options{History: history})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.GPUChanges) != 1 || d.GPUChanges[0] != (GPUChange{Scenario: "x", Old: 8, New: 4}) {
		t.Fatalf("GPU changes %+v", d.GPUChanges)
	}
	if want := "per GPU: x 8 GPUs in OLD, 4 GPUs in NEW; its changes are of throughput per GPU"; d.PerGPULine() != want {
		t.Errorf("line %q, want %q", d.PerGPULine(), want)
	}
	if len(d.Rows) != 3 || d.Regressed() {
		t.Fatalf("%d rows, regressed %v: want 3 rows, none a regression", len(d.Rows), d.Regressed())
	}
	for _, r := range d.Rows {
		if !r.PerGPU || r.OldPerGPU == nil || r.NewPerGPU == nil {
			t.Fatalf("%s: per GPU %v %v %v", measure.LevelName(r.Level), r.PerGPU, r.OldPerGPU, r.NewPerGPU)
		}
		if math.Abs(r.OldPerGPU.Center*8-r.Old.Center) > 1e-9*r.Old.Center || math.Abs(r.NewPerGPU.Center*4-r.New.Center) > 1e-9*r.New.Center {
			t.Errorf("%s: per GPU %v → %v, whole %v → %v", measure.LevelName(r.Level), r.OldPerGPU.Center, r.NewPerGPU.Center, r.Old.Center, r.New.Center)
		}
		if r.DeltaPct < 5 || r.DeltaPct > 15 || !r.Improvement || r.Outcome != verdict.OutcomeFaster {
			t.Errorf("%s: %+.1f%% %s (improvement %v), want about +10%% per GPU, an improvement", measure.LevelName(r.Level), r.DeltaPct, r.Outcome, r.Improvement)
		}
	}
	same := gpuRun(t, tp8, 8, 83)
	d, err = Compare(old, same, Options{History: history})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.GPUChanges) != 0 || d.PerGPULine() != "" {
		t.Errorf("same GPUs: changes %+v, line %q", d.GPUChanges, d.PerGPULine())
	}
	for _, r := range d.Rows {
		if r.PerGPU || r.OldPerGPU != nil || r.Regression || r.Outcome == verdict.OutcomeFaster || r.Outcome == verdict.OutcomeSlower {
			t.Errorf("A/A %s: per GPU %v, %+.1f%% %s", measure.LevelName(r.Level), r.PerGPU, r.DeltaPct, r.Outcome)
		}
	}
}
