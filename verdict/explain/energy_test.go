package explain_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// constantPower is one GPU drawing w watts, read every half second over
// the whole span of recs.
func constantPower(recs []measure.Record, w float64) *measure.PowerLog {
	span, _ := measure.WallWindow(recs)
	p := &measure.PowerLog{Source: "nvidia-smi", IntervalMs: 500, GPUs: []int{0}}
	for t := span.Start - 1e9; t <= span.End+1e9; t += 5e8 {
		p.Samples = append(p.Samples, measure.PowerSample{TimeNs: t, PowerW: w, UtilPct: -1, MemMiB: -1, SMMHz: -1})
	}
	return p
}

// energyCampaign is one engine's campaign of rounds, each launch drawing a
// constant power (truePowerW times a log-normal launch factor of σ
// powerSigma); it returns the verdict and each launch's power.
func energyCampaign(t *testing.T, rounds int, seed uint64, truePowerW, powerSigma float64) (*verdict.Verdict, map[int]float64) {
	t.Helper()
	s := verdicttest.DefaultSweep()
	e := verdicttest.RealisticNoise(verdicttest.Baseline)
	ls := verdicttest.Campaign([]verdicttest.Engine{e}, s, rounds, seed)
	in := verdicttest.CampaignInput([]string{"baseline"}, s, rounds, ls)
	rng := rand.New(rand.NewPCG(seed, 0xe7e7))
	watts := map[int]float64{}
	for i := range in.Launches["baseline"] {
		l := &in.Launches["baseline"][i]
		w := truePowerW * math.Exp(powerSigma*rng.NormFloat64())
		watts[l.Round] = w
		l.Power = constantPower(l.Records, w)
	}
	v, err := judge.Records(in, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v, watts
}

// TestEnergyPerLaunch: each launch's energy per 1000 tokens is its power
// over its steady-state throughput, the figure the comparisons use; the
// level's estimate is their geometric mean with an interval across
// launches, and a single launch has a point and no interval.
func TestEnergyPerLaunch(t *testing.T) {
	v, watts := energyCampaign(t, 5, 1, 1200, 0.02)
	s := v.Scenario("baseline")
	for _, l := range s.Levels {
		if l.Energy == nil {
			t.Fatalf("%s: no energy", l.Level)
		}
		if len(l.Energy.Launches) != 5 {
			t.Fatalf("%s: %d launches with energy", l.Level, len(l.Energy.Launches))
		}
		logSum := 0.0
		for i, le := range l.Energy.Launches {
			ll := l.Launches[i]
			want := watts[ll.Round] / ll.Throughput * 1000
			if math.Abs(le.JoulesPerKTok-want) > 1e-6*want || math.Abs(le.PowerW-watts[ll.Round]) > 1e-6*watts[ll.Round] {
				t.Errorf("%s round %d: %.3f J/1k at %.1f W, want %.3f at %.1f", l.Level, ll.Round, le.JoulesPerKTok, le.PowerW, want, watts[ll.Round])
			}
			logSum += math.Log(le.JoulesPerKTok)
		}
		j := l.Energy.JoulesPerKTok
		if gm := math.Exp(logSum / 5); math.Abs(j.Center-gm) > 1e-9*gm {
			t.Errorf("%s: center %.3f, geometric mean of the launches %.3f", l.Level, j.Center, gm)
		}
		if !(j.Lo < j.Center && j.Center < j.Hi) || j.N != 5 {
			t.Errorf("%s: interval [%.3f, %.3f] around %.3f over %d launches", l.Level, j.Lo, j.Hi, j.Center, j.N)
		}
	}
	one, _ := energyCampaign(t, 1, 2, 1200, 0.02)
	for _, l := range one.Scenario("baseline").Levels {
		if j := l.Energy.JoulesPerKTok; j.Lo != j.Center || j.Hi != j.Center || j.N != 1 {
			t.Errorf("one launch, %s: [%v, %v] around %v: an interval one launch cannot give", l.Level, j.Lo, j.Hi, j.Center)
		}
	}
}

// TestEnergyCoverage: the 95% interval of energy per 1000 tokens holds the
// truth at ≥ 85% of levels under realistic launch noise in both throughput
// (1% per launch, 1% drift) and power (2% per launch); a method that ignored
// launch-to-launch variation (within-launch intervals, or none) would fall
// far below. The truth is the mean power over the engine's typical steady
// throughput, exp E[log throughput], taken from a separate set of
// reference campaigns: the engine's analytic throughput is only an
// approximation of what a closed loop measures.
func TestEnergyCoverage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("many simulated campaigns")
	}
	const power = 1200.0
	const referenceCampaigns = 20
	logTP := map[measure.Level]float64{}
	n := map[measure.Level]int{}
	for seed := range uint64(referenceCampaigns) {
		v, _ := energyCampaign(t, 5, 10_000+seed, power, 0)
		for _, l := range v.Scenario("baseline").Levels {
			for _, ll := range l.Launches {
				logTP[l.Level] += math.Log(ll.Throughput)
				n[l.Level]++
			}
		}
	}
	covered, levels := 0, 0
	for seed := range uint64(verdicttest.CoverageCampaigns) {
		v, _ := energyCampaign(t, 5, 100+seed, power, 0.02)
		for _, l := range v.Scenario("baseline").Levels {
			truth := power / math.Exp(logTP[l.Level]/float64(n[l.Level])) * 1000
			levels++
			if j := l.Energy.JoulesPerKTok; j.Lo <= truth && truth <= j.Hi {
				covered++
			}
		}
	}
	share := float64(covered) / float64(levels)
	t.Logf("energy interval coverage: %d of %d levels (%.0f%%)", covered, levels, 100*share)
	if share < 0.85 {
		t.Errorf("the energy interval holds the truth at %.0f%% of levels, want ≥ 85%%", 100*share)
	}
}
