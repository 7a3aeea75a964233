package verdict

import (
	"math"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/slo"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// perGPURun writes a campaign of engines named names, as a run directory
// whose manifest records counts (nil: none) and, when o is not nil, an
// objective; seed draws the noise.
func perGPURun(t *testing.T, names []string, engines []verdicttest.Engine, counts map[string]int, o *slo.SLO, seed uint64) *results.Run {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 10, 70}
	run, err := verdicttest.WriteCampaign(t.TempDir(), names, engines, s, perGPURounds, seed, counts, o)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// perGPUObjective puts the capacities of the TP8, TP4 and TP4 replicas
// inside the sweep (1, 10, 70) or at its top: a TPOT bound most of them
// miss at C=70.
var perGPUObjective = slo.SLO{Bounds: map[string]float64{slo.TPOT: 0.05}}

// TestCapacityPerGPU: with different GPU counts, each scenario's capacity
// and each level's goodput have their share of one GPU beside them, and
// the sentences show it; the comparisons stay of the whole capacity (the
// load a deployment sustains, docs/METHOD.md), so every change, p-value
// and winner is what the run without counts has (the corrected p-value
// moves with the throughput comparisons of its family, which are per GPU). With equal counts the
// per-GPU figures are there and the sentences do not show them.
func TestCapacityPerGPU(t *testing.T) {
	o := perGPUObjective
	engines := []verdicttest.Engine{tp8Engine, tp4Engine, tp4x2Engine}
	compute := func(counts map[string]int) *Verdict {
		v, err := decideDir(perGPURun(t, perGPUNames, engines, counts, &o, 71), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Capacity == nil || len(v.Capacity.Comparisons) != 2 {
			t.Fatalf("capacity %+v: want two comparisons", v.Capacity)
		}
		return v
	}
	counts := map[string]int{"tp8": 8, "tp4": 4, "tp4x2": 8}
	plain, per, equal := compute(nil), compute(counts), compute(map[string]int{"tp8": 8, "tp4": 8, "tp4x2": 8})
	if !per.Capacity.PerGPU || plain.Capacity.PerGPU || equal.Capacity.PerGPU {
		t.Fatalf("capacity per GPU: %v with different counts, %v without, %v with equal", per.Capacity.PerGPU, plain.Capacity.PerGPU, equal.Capacity.PerGPU)
	}
	for i, sc := range per.Capacity.Scenarios {
		g := float64(counts[sc.Scenario])
		if sc.GPUs != counts[sc.Scenario] || sc.PerGPU == nil {
			t.Fatalf("%s: GPUs %d, per GPU %v", sc.Scenario, sc.GPUs, sc.PerGPU)
		}
		for _, x := range [][2]float64{{sc.PerGPU.Center, sc.Capacity.Center}, {sc.PerGPU.Lo, sc.Capacity.Lo}, {sc.PerGPU.Hi, sc.Capacity.Hi}} {
			if math.Abs(x[0]*g-x[1]) > 1e-9*x[1] {
				t.Errorf("%s: capacity per GPU %+v, want %+v over %v", sc.Scenario, *sc.PerGPU, sc.Capacity, g)
			}
		}
		if !strings.HasSuffix(sc.PerGPUText, " per GPU") || sc.Text != plain.Capacity.Scenarios[i].Text {
			t.Errorf("%s: text %q per GPU %q; without counts %q", sc.Scenario, sc.Text, sc.PerGPUText, plain.Capacity.Scenarios[i].Text)
		}
		if plain.Capacity.Scenarios[i].PerGPU != nil {
			t.Errorf("%s: a capacity per GPU without a GPU count", sc.Scenario)
		}
		s := per.Scenario(sc.Scenario)
		for _, l := range s.Levels {
			if l.SLO == nil || math.Abs(l.SLO.GoodputPerGPU*g-l.SLO.Goodput) > 1e-9*l.SLO.Goodput || (l.SLO.Goodput > 0) != (l.SLO.GoodputPerGPU > 0) {
				t.Errorf("%s %s: goodput %+v, want its share of %v GPUs", sc.Scenario, measure.LevelName(l.Level), l.SLO, g)
			}
		}
	}
	for i, c := range per.Capacity.Comparisons {
		was := plain.Capacity.Comparisons[i]
		if c.DeltaPct != was.DeltaPct || c.P != was.P || c.Outcome != was.Outcome || c.Winner != was.Winner {
			t.Errorf("%s: %+.3f%% p=%g %s %q, without counts %+.3f%% p=%g %s %q: the capacity comparison is of the whole capacity",
				c.Variant, c.DeltaPct, c.P, c.Outcome, c.Winner, was.DeltaPct, was.P, was.Outcome, was.Winner)
		}
		for _, name := range []string{per.Baseline, c.Variant} {
			sc := per.Capacity.scenario(name)
			if want := "(" + sc.PerGPUText + " on " + GPUsText(sc.GPUs) + ")"; !strings.Contains(c.Sentence, want) {
				t.Errorf("sentence %q lacks %q", c.Sentence, want)
			}
		}
		if e := equal.Capacity.Comparisons[i]; strings.Contains(e.Sentence, "per GPU") || e.Sentence != was.Sentence {
			t.Errorf("equal counts: %q, without counts %q", e.Sentence, was.Sentence)
		}
	}
}
