package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// priorTrial is one simulated comparison at one look: R paired rounds of a
// level whose rounds vary with sd sigma (log units) about a true difference
// d, judged with tonight's variance alone or pooled with a prior whose own
// estimate came from priorDF df of a variance sigma²/ratio (ratio > 1:
// tonight is noisier than the profile says). It reports a false call of a
// difference (d = 0) or a tie (|d| at the margin).
type priorTrial struct {
	rounds         int
	ratio, priorDF float64
	d, margin      float64
	usePrior       bool
	// naive pools the prior with all its df, untested and as it is.
	naive bool
}

// priorSigma is the round sd of the trials: 2%, the demo's.
const priorSigma = 0.02

// run draws n trials and returns the share that rejected "no difference"
// at α = 0.05 two-sided and the share that called a tie (the 90% interval
// inside ±margin).
func (tr priorTrial) run(n int, rng *rand.Rand) (reject, tie float64) {
	df := float64(tr.rounds - 1)
	chiT := distuv.ChiSquared{K: df, Src: rng}
	chiP := distuv.ChiSquared{K: tr.priorDF, Src: rng}
	prior0 := priorSigma * priorSigma / tr.ratio
	lo, hi := math.Log1p(-tr.margin), math.Log1p(tr.margin)
	// The df take a few values: their quantiles are computed once.
	q975, q95 := map[float64]float64{}, map[float64]float64{}
	quantiles := func(df float64) (float64, float64) {
		if _, ok := q975[df]; !ok {
			t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
			q975[df], q95[df] = t.Quantile(0.975), t.Quantile(0.95)
		}
		return q975[df], q95[df]
	}
	var rej, ties int
	for range n {
		mean := tr.d + rng.NormFloat64()*priorSigma/math.Sqrt(float64(tr.rounds))
		lv := rule.Var{Var: priorSigma * priorSigma * chiT.Rand() / df, DF: df}
		switch {
		case tr.naive:
			pv := prior0 * chiP.Rand() / tr.priorDF
			lv = rule.Var{Var: (lv.DF*lv.Var + tr.priorDF*pv) / (lv.DF + tr.priorDF), DF: lv.DF + tr.priorDF}
		case tr.usePrior:
			p := &NoisePrior{Var: prior0 * chiP.Rand() / tr.priorDF, DF: tr.priorDF}
			lv, _ = p.combine(lv)
		}
		se := math.Sqrt(lv.Var / float64(tr.rounds))
		two, q := quantiles(lv.DF)
		if math.Abs(mean)/se > two {
			rej++
		}
		if mean-q*se >= lo && mean+q*se <= hi {
			ties++
		}
	}
	return float64(rej) / float64(n), float64(ties) / float64(n)
}

// TestPriorKeepsEachErrorRate: a comparison that borrows a host's noise
// profile keeps its size (a false difference) and its false-tie rate (a tie
// called at a true difference exactly at the margin) at or below 5%, at the
// looks of a short campaign (3, 4 and 6 rounds), when the profile matches
// tonight, when tonight is quieter, and when tonight is 25% and 100%
// noisier than the profile said. Naive pooling (no agreement test, no
// slack, no cap) fails the same bounds; and the prior must pay for itself:
// at a matching profile it calls true ties more often than tonight alone.
// A night three times as noisy is logged, not bound. 20,000
// trials a figure: the standard error of a 5% rate is 0.15 points, and the
// bound allows 0.3 (two of them) over 5%.
func TestPriorKeepsEachErrorRate(t *testing.T) {
	const n = 20000
	const bound = 0.053
	rng := rand.New(rand.NewPCG(11, 12))
	margin := 0.04 // the demo's equivalence margin
	for _, rounds := range []int{3, 4, 6} {
		for _, ratio := range []float64{0.5, 1, 1.25, 2, 3} {
			name := fmt.Sprintf("%d rounds, tonight %.2f× the profile", rounds, ratio)
			base := priorTrial{rounds: rounds, ratio: ratio, priorDF: 40, margin: margin, usePrior: true}
			size, _ := base.run(n, rng)
			atMargin := base
			atMargin.d = math.Log1p(margin)
			_, falseTie := atMargin.run(n, rng)
			t.Logf("%s: size %.2f%%, false tie %.2f%%", name, 100*size, 100*falseTie)
			if ratio > 2 {
				// Said, not bound: a night three times as noisy as its
				// profile is a changed host, beyond what any prior at two
				// or three rounds can see.
				continue
			}
			if size > bound {
				t.Errorf("%s: size %.2f%%, over 5%%", name, 100*size)
			}
			if falseTie > bound {
				t.Errorf("%s: false tie %.2f%%, over 5%%", name, 100*falseTie)
			}
		}
	}
	// The guards are what keeps the rates: pooled naively, a night twice
	// as noisy as its profile breaks both.
	naive := priorTrial{rounds: 4, ratio: 2, priorDF: 40, margin: margin, naive: true}
	size, _ := naive.run(n, rng)
	naive.d = math.Log1p(margin)
	_, falseTie := naive.run(n, rng)
	t.Logf("naive pooling, 4 rounds, tonight 2× the profile: size %.2f%%, false tie %.2f%%", 100*size, 100*falseTie)
	if size <= 0.06 || falseTie <= 0.06 {
		t.Errorf("naive pooling keeps size %.2f%% and false tie %.2f%% at 2×: the test cannot tell the guards from none", 100*size, 100*falseTie)
	}
	// The prior is worth having: at a matching profile and 3 rounds, true
	// ties (no difference) are called more often than on tonight alone.
	with := priorTrial{rounds: 3, ratio: 1, priorDF: 40, margin: margin, usePrior: true}
	without := with
	without.usePrior = false
	_, tieWith := with.run(n, rng)
	_, tieWithout := without.run(n, rng)
	t.Logf("true ties called at 3 rounds: %.1f%% with the profile, %.1f%% without", 100*tieWith, 100*tieWithout)
	if tieWith < tieWithout+0.08 {
		t.Errorf("with a matching profile %.1f%% of true ties are called at 3 rounds, without %.1f%%: the prior buys nothing",
			100*tieWith, 100*tieWithout)
	}
}

// seqInputMax is seqInput with a plan of max rounds.
func seqInputMax(engines []verdicttest.Engine, names []string, max int, seed uint64) records.Input {
	s := honestySweep()
	return verdicttest.CampaignInput(names, s, max, verdicttest.Campaign(engines, s, max, seed))
}

// priorHost is e on the host of make sequential's study of the profile:
// the repository's realistic noise unless BAKEOFF_PRIOR_LAUNCH_SIGMA
// (a launch's sd, e.g. 0.02; BAKEOFF_PRIOR_LAUNCH_TDF=3 draws it with
// t(3) tails) and BAKEOFF_PRIOR_DRIFT (the drift's sd, with
// BAKEOFF_PRIOR_DRIFT_TAU its correlation time in seconds, or with
// BAKEOFF_PRIOR_DRIFT_WALK=1 the time it takes a random walk to move by it)
// say a noisier one; the profile is then learned on that host too, so that
// it matches.
func priorHost(e verdicttest.Engine) verdicttest.Engine {
	for _, v := range []struct {
		name string
		to   *float64
	}{{"BAKEOFF_PRIOR_LAUNCH_SIGMA", &e.LaunchSigma}, {"BAKEOFF_PRIOR_LAUNCH_TDF", &e.LaunchTailDF},
		{"BAKEOFF_PRIOR_DRIFT", &e.Drift}, {"BAKEOFF_PRIOR_DRIFT_TAU", &e.DriftTau}} {
		if s := os.Getenv(v.name); s != "" {
			if x, err := strconv.ParseFloat(s, 64); err == nil && x >= 0 {
				*v.to = x
			}
		}
	}
	e.DriftWalk = os.Getenv("BAKEOFF_PRIOR_DRIFT_WALK") == "1"
	return e
}

// learnedPrior is the noise profile two earlier A/A campaigns of rounds
// rounds on the synthetic host leave, as package noise pools them.
func learnedPrior(t *testing.T, rounds int) *NoisePrior {
	t.Helper()
	var ss, df float64
	for seed := range uint64(2) {
		base := priorHost(realBaseline)
		in := seqInputMax([]verdicttest.Engine{base, base}, []string{"baseline", "variant"}, rounds, 30000+seed)
		v := mustVerdict(t, in, Options{})
		if v.Noise == nil {
			t.Fatal("a campaign of rounds measured no noise")
		}
		ss += v.Noise.Var * v.Noise.DF
		df += v.Noise.DF
	}
	return &NoisePrior{Var: ss / df, DF: df, Source: "synthetic host", Runs: []string{"a", "b"}}
}

// TestPriorSequential: sequential campaigns (looks after rounds 3 to 12)
// with a host's noise profile as the prior. A/A: a winner in at most one of
// ten campaigns (a correct rule, at about 1% of campaigns, fails that about
// once in two hundred runs of the test) when the profile matches tonight,
// when tonight is 25% and 100% noisier, and when it is quieter; the same
// campaigns serve every profile, so the figures differ by the profile
// alone. With BAKEOFF_SEQUENTIAL_CAMPAIGNS=N (make sequential), N
// campaigns per figure, and on seeds-shaped campaigns (EAGLE-3 topk=4
// against the baseline; and the same with a +0.1% flag and an A/A twin
// beside it, the shape of the seeds' campaign with its twin; max 12 and
// 20) a matching profile must not lengthen the night: launches to a
// decided verdict, the baseline's included, at most 2% more than without
// it (the figures are logged; docs/METHOD.md says what they were).
func TestPriorSequential(t *testing.T) {
	syntheticCampaigns(t)
	prior := learnedPrior(t, seqPlan.MaxRounds)
	t.Logf("learned profile: round sd %.2f%%, %.0f df", 100*math.Sqrt(prior.Var), prior.DF)
	n := seqCampaigns(10)
	ratios := []struct {
		name  string
		ratio float64 // tonight's variance over the profile's
	}{
		{"matching", 1}, {"tonight 25% noisier", 1.25}, {"tonight 2× noisier", 2}, {"tonight quieter", 0.5},
	}
	tallies := make([]seqTally, len(ratios))
	for seed := range uint64(n) {
		host := priorHost(realBaseline)
		in := seqInputMax([]verdicttest.Engine{host, host}, []string{"baseline", "variant"}, seqPlan.MaxRounds, 31000+seed)
		for i, r := range ratios {
			p := *prior
			p.Var /= r.ratio
			v := mustVerdict(t, in, Options{Sequential: &seqPlan, Prior: &p})
			tallies[i].add(againstBaseline(v, "variant"), nil)
		}
	}
	for i, r := range ratios {
		t.Logf("A/A with the profile, %s: %s", r.name, tallies[i])
		if limit := max(1, n/10); tallies[i].winnerCampaigns > limit {
			t.Errorf("A/A with the profile, %s: a winner in %d of %d campaigns, want at most %d", r.name, tallies[i].winnerCampaigns, n, limit)
		}
	}
	if seqCampaigns(0) == 0 {
		// What a profile saves takes campaigns of a real difference
		// besides: make sequential measures it, at max 12 and 20.
		return
	}
	eagle := priorHost(verdicttest.RealisticNoise(verdicttest.Eagle3TopK4))
	base := priorHost(realBaseline)
	flag := base
	flag.Slowdown = 1 / 1.001
	for _, shape := range []struct {
		name    string
		engines []verdicttest.Engine
		names   []string
	}{
		{"baseline and EAGLE-3", []verdicttest.Engine{base, eagle}, []string{"baseline", "variant"}},
		// The seeds' campaign with its A/A twin: two comparisons that
		// are ties, waiting on their df, beside one decided early.
		{"baseline, EAGLE-3, a +0.1% flag and a twin", []verdicttest.Engine{base, eagle, flag, base},
			[]string{"baseline", "variant", "flag", "twin"}},
	} {
		for _, maxRounds := range []int{12, 20} {
			plan := SequentialPlan{MinRounds: 3, MaxRounds: maxRounds}
			var with, without, decidedWith, decidedWithout int
			k := (n + 1) / 2
			for seed := range uint64(k) {
				in := seqInputMax(shape.engines, shape.names, maxRounds, 32000+seed)
				for _, o := range []struct {
					prior    *NoisePrior
					sum, dec *int
				}{{prior, &with, &decidedWith}, {nil, &without, &decidedWithout}} {
					v := mustVerdict(t, in, Options{Sequential: &plan, Prior: o.prior})
					base, undecided := 0, false
					for _, vs := range v.Sequential.Variants {
						*o.sum += vs.Rounds
						base = max(base, vs.Rounds)
						undecided = undecided || vs.Decided < vs.Comparisons
					}
					*o.sum += base // the baseline runs while any variant does
					if !undecided {
						*o.dec++
					}
				}
			}
			t.Logf("%s, max %d: launches to a decided verdict over %d campaigns: %.1f a campaign with a matching profile, %.1f without (%.1f%% fewer); fully decided in %d and %d",
				shape.name, maxRounds, k, float64(with)/float64(k), float64(without)/float64(k), 100*(1-float64(with)/float64(without)), decidedWith, decidedWithout)
			// The slack that keeps the error rates can widen a late
			// look's interval, so a campaign may take a round more with
			// the profile than without; over campaigns it must not cost
			// launches.
			if float64(with) > 1.02*float64(without) {
				t.Errorf("%s, max %d: a matching profile took %d launches, without it %d: it lengthens the night", shape.name, maxRounds, with, without)
			}
		}
	}
}
