package verdict

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/slo"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// sloTestObjective is the example objective; under it the
// seed-calibrated baseline's capacity lies between C=30 and C=70 and
// EAGLE-3 topk=4's between C=10 and C=30, both limited by TPOT.
var sloTestObjective = slo.SLO{Bounds: map[string]float64{slo.TTFT: 2, slo.TPOT: 0.06}}

// sloSweep is the levels around both capacities.
func sloSweep() verdicttest.Sweep {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{5, 10, 30, 70}
	return s
}

// sloVerdict runs one campaign of the engines and judges it under o.
func sloVerdict(t *testing.T, names []string, engines []verdicttest.Engine, rounds int, seed uint64) *Verdict {
	t.Helper()
	s := sloSweep()
	in := verdicttest.CampaignInput(names, s, rounds, verdicttest.Campaign(engines, s, rounds, seed))
	o := sloTestObjective
	in.Manifest.SLO = &o
	v, err := DecideRun(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Capacity == nil {
		t.Fatal("no capacity under an objective")
	}
	return v
}

// trueCapacity is the engine's capacity under sloTestObjective on the
// host the campaigns run on: the geometric mean of the capacities of 80
// independent launches (each on a fresh machine, its drift drawn anew), each
// measured as the verdict measures one. It is what the campaigns'
// intervals must contain. A p99 includes the slow drift's spread within a
// level, so the truth is taken under the same noise rather than without it.
// It differs from the model's continuous capacity by the interpolation
// between levels, which only a finer sweep removes (docs/METHOD.md).
func trueCapacity(t *testing.T, e verdicttest.Engine) float64 {
	t.Helper()
	s := sloSweep()
	var ls []verdicttest.Launch
	for r := 1; r <= 80; r++ {
		ls = append(ls, verdicttest.Launch{Round: r, Order: r - 1, Records: verdicttest.Simulate(e, s, uint64(1000+r))})
	}
	in := verdicttest.CampaignInput([]string{"x"}, s, 80, ls)
	o := sloTestObjective
	in.Manifest.SLO = &o
	v, err := DecideRun(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v.Capacity.Scenarios[0].Capacity.Center
}

// continuousCapacity is the model's own capacity under a TPOT bound: the
// concurrency at which the expected decode step (with the prefills that a
// closed loop of 200-token requests interleaves) reaches the bound.
func continuousCapacity(e verdicttest.Engine, tpot float64) float64 {
	const meanPrompt = 20 + 479.0/2 // verdicttest's prompt lengths
	// step(c) + c/200·prefill = tpot·accept, linear in c.
	perC := e.StepPerSeq + e.PrefillPerToken*meanPrompt/200
	return (tpot*e.AcceptLength - e.StepBase + e.StepPerSeq) / perC
}

// TestSLOCapacityCoverage: the capacity's 95% interval across launches
// contains the true capacity in at least 90% of campaigns under the noise
// of a real host, for both engines, and the baseline (three times EAGLE-3
// topk=4's capacity) is always named the winner.
func TestSLOCapacityCoverage(t *testing.T) {
	syntheticCampaigns(t)
	const campaigns = 40
	engines := []verdicttest.Engine{verdicttest.Baseline, verdicttest.Eagle3TopK4}
	names := []string{"baseline", "eagle3-topk4"}
	noisy := []verdicttest.Engine{verdicttest.RealisticNoise(engines[0]), verdicttest.RealisticNoise(engines[1])}
	truth := []float64{trueCapacity(t, noisy[0]), trueCapacity(t, noisy[1])}
	for i, e := range engines {
		c := continuousCapacity(e, sloTestObjective.Bounds[slo.TPOT])
		t.Logf("%s: true capacity %.2f (the model's continuous capacity %.2f)", names[i], truth[i], c)
		// The interpolation between levels (10 to 30 for EAGLE-3, where
		// its TPOT is far from a power of the load) and the p99 over the
		// mean cost some percent; much more is a bug in the truth.
		if math.Abs(math.Log(truth[i]/c)) > 0.15 {
			t.Errorf("%s: capacity at the levels %.2f is %.1f%% from the model's %.2f", names[i], truth[i], 100*(truth[i]/c-1), c)
		}
	}
	covered := make([]int, 2)
	wins := 0
	var width float64
	for k := range campaigns {
		v := sloVerdict(t, names, noisy, DefaultRounds, uint64(7000+k))
		for i, sc := range v.Capacity.Scenarios {
			e := sc.Capacity
			if e.Lo <= truth[i] && truth[i] <= e.Hi {
				covered[i]++
			}
			width += (e.Hi - e.Lo) / 2 / e.Center / float64(2*campaigns)
		}
		if cc := v.Capacity.Comparisons[0]; cc.Winner == "baseline" {
			wins++
		} else if k == 0 || cc.Outcome == OutcomeFaster {
			t.Logf("campaign %d: %s", k, cc.Sentence)
		}
		if k == 0 {
			t.Log(v.Capacity.Comparisons[0].Sentence)
		}
	}
	t.Logf("coverage over %d campaigns: baseline %d, eagle3-topk4 %d; mean half-width %.2f%%; baseline named the winner in %d",
		campaigns, covered[0], covered[1], 100*width, wins)
	for i := range names {
		if covered[i] < campaigns*9/10 {
			t.Errorf("%s: the interval contains the true capacity in %d of %d campaigns, want ≥ 90%%", names[i], covered[i], campaigns)
		}
	}
	if wins != campaigns {
		t.Errorf("the baseline, with three times the capacity, won %d of %d campaigns", wins, campaigns)
	}
}

// TestSLOCapacityAA: two copies of one engine are never named different by
// capacity beyond chance (the capacity comparison is one of the corrected
// family).
func TestSLOCapacityAA(t *testing.T) {
	syntheticCampaigns(t)
	const campaigns = 40
	e := verdicttest.RealisticNoise(verdicttest.Baseline)
	wins, ties := 0, 0
	for k := range campaigns {
		v := sloVerdict(t, []string{"baseline", "again"}, []verdicttest.Engine{e, e}, DefaultRounds, uint64(9000+k))
		switch cc := v.Capacity.Comparisons[0]; cc.Outcome {
		case OutcomeFaster, OutcomeSlower:
			wins++
			t.Logf("campaign %d: %s", k, cc.Sentence)
		case OutcomeTie:
			ties++
		}
	}
	t.Logf("A/A capacity: a winner in %d of %d campaigns, a tie in %d", wins, campaigns, ties)
	if wins > 2 {
		t.Errorf("A/A: a capacity winner in %d of %d campaigns, want ≤ 2 (5%%)", wins, campaigns)
	}
}

// TestSLOGoodput: at a level that meets the objective with room to spare
// every request is good, so the goodput is the throughput over the tokens
// per request; at a level whose median TPOT is over the bound, it is near
// nothing.
func TestSLOGoodput(t *testing.T) {
	v := sloVerdict(t, []string{"baseline", "eagle3-topk4"},
		[]verdicttest.Engine{verdicttest.Baseline, verdicttest.Eagle3TopK4}, 2, 1)
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.SLO == nil || len(l.SLO.Launches) != 2 {
				t.Fatalf("%s %s: SLO figures %+v", s.Name, l.Level, l.SLO)
			}
			switch {
			case l.TPOT.P99 < 0.8*sloTestObjective.Bounds[slo.TPOT]:
				want := l.SteadyThroughput / float64(v.MaxTokens)
				if l.SLO.Meets != 2 || math.Abs(l.SLO.Goodput/want-1) > 0.01 {
					t.Errorf("%s %s: goodput %.3f req/s, meets %d of 2; want %.3f (throughput over %d tokens), 2",
						s.Name, l.Level, l.SLO.Goodput, l.SLO.Meets, want, v.MaxTokens)
				}
			case l.TPOT.P50 > sloTestObjective.Bounds[slo.TPOT]:
				if l.SLO.Meets != 0 || l.SLO.Goodput > 0.01*l.SteadyThroughput/float64(v.MaxTokens) {
					t.Errorf("%s %s: TPOT p50 %.1f ms over the bound, yet goodput %.3f, meets %d",
						s.Name, l.Level, 1e3*l.TPOT.P50, l.SLO.Goodput, l.SLO.Meets)
				}
			}
		}
	}
}

// TestSLOCapacityRates: levels keyed as request rates give the capacity in
// req/s, interpolated on the rates themselves. The records are a closed
// loop's relabelled (C → C/10 req/s), so the capacity is the closed loop's
// over ten.
func TestSLOCapacityRates(t *testing.T) {
	s := sloSweep()
	names := []string{"baseline"}
	ls := verdicttest.Campaign([]verdicttest.Engine{verdicttest.RealisticNoise(verdicttest.Baseline)}, s, 3, 11)
	judge := func(relabel bool) *CapacityVerdict {
		in := verdicttest.CampaignInput(names, s, 3, ls)
		if relabel {
			for _, l := range in.Launches["baseline"] {
				for i := range l.Records {
					l.Records[i].Rate = float64(l.Records[i].Level.Concurrency) / 10
					l.Records[i].Level = measure.RateLevel(l.Records[i].Rate)
				}
			}
		}
		o := sloTestObjective
		in.Manifest.SLO = &o
		v, err := DecideRun(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return v.Capacity
	}
	closed := judge(false)
	rates := judge(true)
	if rates.Unit != "req/s" || closed.Unit != "concurrent users" {
		t.Errorf("units %q and %q", rates.Unit, closed.Unit)
	}
	c, r := closed.Scenarios[0].Capacity.Center, rates.Scenarios[0].Capacity.Center
	if math.Abs(r*10/c-1) > 1e-9 {
		t.Errorf("capacity %v req/s for a closed loop's %v", r, c)
	}
	t.Logf("%s; %s", closed.Scenarios[0].Text, rates.Scenarios[0].Text)
}
