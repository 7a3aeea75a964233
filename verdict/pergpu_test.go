package verdict

import (
	"math"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// A TP8 server against one TP4 server and two TP4 replicas. The TP4
// server makes 55% of the TP8's throughput on half its GPUs: slower by
// 45%, faster per GPU by 10%, at every level. Two replicas behind one
// endpoint are modelled as one server whose step grows half as fast with
// the batch (each replica runs half of it): as fast as one TP4 at C=1,
// and twice as fast under load, on as many GPUs as the TP8.
var (
	perGPUNames = []string{"tp8", "tp4", "tp4x2"}
	tp8Engine   = verdicttest.Baseline
	tp4Engine   = func() verdicttest.Engine { e := verdicttest.Baseline; e.Slowdown = 1 / 0.55; return e }()
	tp4x2Engine = func() verdicttest.Engine { e := tp4Engine; e.StepPerSeq /= 2; return e }()
)

// perGPURounds is the fixture's rounds: enough for a paired test with
// room to decide a 10% difference.
const perGPURounds = 4

// perGPUVerdict writes the three scenarios' campaign as a run directory
// whose manifest records counts (nil: a run written before counts were),
// and computes its verdict from disk.
func perGPUVerdict(t *testing.T, counts map[string]int) *Verdict {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 10, 70}
	ls := verdicttest.Campaign([]verdicttest.Engine{tp8Engine, tp4Engine, tp4x2Engine}, s, perGPURounds, 71)
	m := verdicttest.Manifest("pergpu", "run", "sha256:pergpu", "tp8", s, perGPUNames...)
	m.Rounds, m.ScenarioGPUs = perGPURounds, counts
	scenarios := make([]verdicttest.Scenario, len(perGPUNames))
	for i, name := range perGPUNames {
		scenarios[i] = verdicttest.Scenario{Name: name, Rounds: make([][]measure.Record, perGPURounds)}
	}
	for _, l := range ls {
		scenarios[l.Scenario].Rounds[l.Round-1] = l.Records
	}
	run, err := verdicttest.WriteRun(t.TempDir(), m, scenarios)
	if err != nil {
		t.Fatal(err)
	}
	v, err := judgedDir(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPerGPUEqualCounts: scenarios that hold as many GPUs each are compared
// as they always were; only the per-GPU figures are added.
func TestPerGPUEqualCounts(t *testing.T) {
	plain := perGPUVerdict(t, nil)
	equal := perGPUVerdict(t, map[string]int{"tp8": 8, "tp4": 8, "tp4x2": 8})
	if plain.PerGPU || equal.PerGPU || equal.PerGPULine() != "" {
		t.Fatalf("PerGPU %v, %v, line %q: want none with equal or unknown counts", plain.PerGPU, equal.PerGPU, equal.PerGPULine())
	}
	for i, row := range equal.Rows {
		was := plain.Rows[i]
		if row.Outcome != was.Outcome || row.Winner != was.Winner {
			t.Errorf("%s: row %s %s, was %s %s", measure.LevelName(row.Level), row.Outcome, row.Winner, was.Outcome, was.Winner)
		}
		for j, c := range row.Cells {
			w := was.Cells[j]
			if c.DeltaPct != w.DeltaPct || c.Outcome != w.Outcome || c.PAdjusted != w.PAdjusted || c.PerGPU {
				t.Errorf("%s %s: %+.3f%% %s p=%g per GPU %v, was %+.3f%% %s p=%g", measure.LevelName(row.Level), c.Scenario,
					c.DeltaPct, c.Outcome, c.PAdjusted, c.PerGPU, w.DeltaPct, w.Outcome, w.PAdjusted)
			}
			if c.ThroughputPerGPU == nil || math.Abs(c.ThroughputPerGPU.Center*8-c.Throughput.Center) > 1e-9*c.Throughput.Center {
				t.Errorf("%s %s: per GPU %+v, want %g/8", measure.LevelName(row.Level), c.Scenario, c.ThroughputPerGPU, c.Throughput.Center)
			}
			if w.ThroughputPerGPU != nil {
				t.Errorf("%s %s: a per-GPU figure without a GPU count", measure.LevelName(row.Level), c.Scenario)
			}
		}
	}
}

// TestPerGPUDifferentCounts: with the TP4 on 4 GPUs, every comparison is
// per GPU: the TP4's change against the TP8 is its throughput ratio times
// 8/4 (the same interval, moved), it is faster per GPU where it was slower,
// it wins C=1, where the TP8 won on throughput, and the table and the
// sentences say per GPU. The TP4 pair on 8 GPUs compares as before.
func TestPerGPUDifferentCounts(t *testing.T) {
	plain := perGPUVerdict(t, nil)
	v := perGPUVerdict(t, map[string]int{"tp8": 8, "tp4": 4, "tp4x2": 8})
	if !v.PerGPU {
		t.Fatal("not per GPU with 8, 4 and 8 GPUs")
	}
	if got, want := v.PerGPULine(), "per GPU: tp8 8 GPUs, tp4 4 GPUs, tp4x2 8 GPUs; each change and winner is of throughput per GPU"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	for i, row := range v.Rows {
		lv := measure.LevelName(row.Level)
		c, was := v.Cell(row.Level, "tp4"), plain.Cell(row.Level, "tp4")
		if !c.PerGPU || !near(c.Speedup, 2*was.Speedup) || !near(c.SpeedupLo, 2*was.SpeedupLo) || !near(c.SpeedupHi, 2*was.SpeedupHi) {
			t.Errorf("%s tp4: speedup %.4f [%.4f, %.4f] per GPU %v; want twice %.4f [%.4f, %.4f]", lv,
				c.Speedup, c.SpeedupLo, c.SpeedupHi, c.PerGPU, was.Speedup, was.SpeedupLo, was.SpeedupHi)
		}
		if was.Outcome != OutcomeSlower || c.Outcome != OutcomeFaster {
			t.Errorf("%s tp4: %s (%+.1f%%) per GPU, %s (%+.1f%%) on throughput; want faster per GPU, slower on throughput",
				lv, c.Outcome, c.DeltaPct, was.Outcome, was.DeltaPct)
		}
		if pair, wasPair := v.Cell(row.Level, "tp4x2"), plain.Cell(row.Level, "tp4x2"); !near(pair.Speedup, wasPair.Speedup) {
			t.Errorf("%s tp4x2 on the TP8's 8 GPUs: speedup %.4f, was %.4f", lv, pair.Speedup, wasPair.Speedup)
		}
		if i == 0 && (plain.Rows[0].Winner != "tp8" || row.Winner != "tp4") {
			t.Errorf("C=1: winner %q per GPU, %q on throughput; want tp4, tp8", row.Winner, plain.Rows[0].Winner)
		}
	}
	for _, x := range v.Crossovers {
		if !strings.HasPrefix(x.Sentence, x.Scenario+" per GPU: ") {
			t.Errorf("crossover %q does not say per GPU", x.Sentence)
		}
	}
}

// TestPerGPUUnknownCount: one scenario's count unknown leaves the run
// compared on throughput: a count against a guess is no fairer.
func TestPerGPUUnknownCount(t *testing.T) {
	v := perGPUVerdict(t, map[string]int{"tp8": 8, "tp4": 4})
	if v.PerGPU {
		t.Error("per GPU with tp4x2's count unknown")
	}
	if s := v.Scenario("tp4x2"); s.GPUs != 0 || s.Levels[0].ThroughputPerGPU != nil {
		t.Errorf("tp4x2: %d GPUs, per GPU %+v; want unknown", s.GPUs, s.Levels[0].ThroughputPerGPU)
	}
	if s := v.Scenario("tp4"); s.GPUs != 4 {
		t.Errorf("tp4: %d GPUs, want 4", s.GPUs)
	}
}
