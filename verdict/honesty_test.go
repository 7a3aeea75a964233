package verdict

import (
	"fmt"
	"maps"
	"math"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// Honesty on synthetic campaigns: the records come from verdicttest's model
// of a continuous-batching server (seed-calibrated) under the noise a real
// host adds (verdicttest.RealisticNoise: 1% per launch, 1% slow drift with a
// 60 s correlation time that carries over between launches), launched in
// counterbalanced rounds, so the true difference between the variants is
// known. Each test's bound is one a broken method fails:
// TestHonestyBrokenMethodFails runs the old method (within-launch samples
// pooled over launches as if independent) on the same A/A campaigns and
// requires it to fail the A/A bound.

// honestyCampaigns is how many synthetic campaigns the A/A figure is
// measured on.
const honestyCampaigns = 40

// simulate runs one campaign of the baseline and a variant.
func simulate(t *testing.T, base, variant verdicttest.Engine, rounds int, seed uint64, o Options) *Verdict {
	t.Helper()
	s := honestySweep()
	ls := verdicttest.Campaign([]verdicttest.Engine{base, variant}, s, rounds, seed)
	v, err := Judged(verdicttest.CampaignInput([]string{"baseline", "variant"}, s, rounds, ls), o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tally counts, over campaigns, the levels and the variant's outcomes.
type tally struct {
	campaigns, levels                  int
	faster, slower, ties, inconclusive int
	winners                            int // rows with a winner
	sentences                          int // campaigns whose crossover names a win or a loss
	covered                            int // levels whose speedup interval holds the truth
	dfSum                              float64
	dfN                                int // levels compared between launches, whose df dfSum adds
}

func (tl *tally) add(v *Verdict, truth map[measure.Level]float64) {
	tl.campaigns++
	named := false
	for _, row := range v.Rows {
		tl.levels++
		c := v.Cell(row.Level, "variant")
		switch c.Outcome {
		case OutcomeFaster:
			tl.faster++
		case OutcomeSlower:
			tl.slower++
		case OutcomeTie:
			tl.ties++
		default:
			tl.inconclusive++
		}
		if row.Winner != "" {
			tl.winners++
		}
		if c.Method == MethodLaunches {
			tl.dfSum += c.DF
			tl.dfN++
		}
		if r, ok := truth[row.Level]; ok && c.SpeedupLo <= r && r <= c.SpeedupHi {
			tl.covered++
		}
	}
	for _, x := range v.Crossovers {
		for _, seg := range x.Segments {
			named = named || seg.Sign != 0
		}
	}
	if named {
		tl.sentences++
	}
}

func (tl tally) rate(n int) float64 { return float64(n) / float64(max(tl.levels, 1)) }

func (tl tally) String() string {
	return fmt.Sprintf("%d campaigns, %d levels: faster %d, slower %d, tie %d, inconclusive %d; a winner at %d levels (%.1f%%); a win or loss in the crossover sentence of %d campaigns (%.1f%%); interval holds the truth at %d levels (%.1f%%); mean df %.1f",
		tl.campaigns, tl.levels, tl.faster, tl.slower, tl.ties, tl.inconclusive,
		tl.winners, 100*tl.rate(tl.winners), tl.sentences, 100*float64(tl.sentences)/float64(max(tl.campaigns, 1)),
		tl.covered, 100*tl.rate(tl.covered), tl.dfSum/float64(max(tl.dfN, 1)))
}

// trueRatios is the ratio of the two engines' expected steady-state
// throughput per level, measured as the verdict measures it on launches
// without launch noise or drift (per-step noise left in), averaged over
// enough launches that its own error is far below the intervals'.
func trueRatios(base, variant verdicttest.Engine) map[measure.Level]float64 {
	key := fmt.Sprintf("%+v|%+v", base, variant)
	trueRatioCache.Lock()
	defer trueRatioCache.Unlock()
	if got, ok := trueRatioCache.m[key]; ok {
		return maps.Clone(got)
	}
	out := simulateTrueRatios(base, variant)
	trueRatioCache.m[key] = maps.Clone(out)
	return out
}

// trueRatioCache keeps each pair's true ratios: several honesty tests ask
// for the same pair, and each answer is 80 simulated launches.
var trueRatioCache = struct {
	sync.Mutex
	m map[string]map[measure.Level]float64
}{m: map[string]map[measure.Level]float64{}}

func simulateTrueRatios(base, variant verdicttest.Engine) map[measure.Level]float64 {
	quiet := func(e verdicttest.Engine) verdicttest.Engine { e.LaunchSigma, e.Drift = 0, 0; return e }
	s := honestySweep()
	const n = 40
	sum := map[measure.Level]float64{}
	for i := range uint64(n) {
		for k, e := range []verdicttest.Engine{quiet(base), quiet(variant)} {
			ls := measureScenario([]records.Launch{{Round: 1, Records: verdicttest.Simulate(e, s, 7000+2*i+uint64(k))}}, DefaultMaxSlices, measure.DefaultPercentiles, nil, nil)
			for _, l := range ls {
				sign := float64(2*k - 1)
				sum[l.Level] += sign * math.Log(l.Launches[0].Throughput) / n
			}
		}
	}
	out := map[measure.Level]float64{}
	for c, x := range sum {
		out[c] = math.Exp(x)
	}
	return out
}

var realBaseline = verdicttest.RealisticNoise(verdicttest.Baseline)

// honestySweep is the sweep of the synthetic honesty campaigns: the seeds'
// eight levels with answers of 100 tokens, half the default's. A level's
// throughput is as steady over 100 tokens a request as over 200, and the
// launches' own noise, which the rounds' variance measures, is the same;
// simulating each token is most of these tests' time, and make test has
// eight minutes. The long runs docs/METHOD.md quotes were made with the
// default's 200.
func honestySweep() verdicttest.Sweep {
	s := verdicttest.DefaultSweep()
	s.MaxTokens = 100
	return s
}

// syntheticCampaigns marks a test of many synthetic campaigns parallel:
// they are CPU-bound, share nothing but read-only fixtures and the
// boundaries' locked cache, and run after the end-to-end tests with real
// sims (which stay serial, so no campaign's CPU disturbs a sim's timing),
// two at a time on a two-core machine.
func syntheticCampaigns(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// TestHonestyAA: the baseline against itself, launched in DefaultRounds
// counterbalanced rounds under launch noise and drift: a winner at no more
// than 5% of levels, and a win or loss in the crossover sentence of no more
// than 5% of campaigns (2 of 40). With the df of the previous version and
// rule.CorrectionBH instead of Holm, 5.2% of 400 campaigns: the reason Holm is
// the default (docs/METHOD.md).
func TestHonestyAA(t *testing.T) {
	syntheticCampaigns(t)
	var tl tally
	for seed := range uint64(honestyCampaigns) {
		tl.add(simulate(t, realBaseline, realBaseline, DefaultRounds, seed+1, Options{}), nil)
	}
	t.Logf("A/A, %d rounds: %s", DefaultRounds, tl)
	if tl.rate(tl.winners) > 0.05 {
		t.Errorf("a winner at %.1f%% of levels, want ≤ 5%%", 100*tl.rate(tl.winners))
	}
	if tl.sentences*20 > tl.campaigns {
		t.Errorf("a false win or loss in %d of %d crossover sentences, want ≤ 5%%", tl.sentences, tl.campaigns)
	}
}

// TestHonestyBrokenMethodFails: on the same A/A campaigns, the method this
// package used before rounds (every within-launch sample of every launch
// pooled as if independent, no correction, no minimum effect) names winners
// at far more than 5% of levels. The A/A bound above can fail.
func TestHonestyBrokenMethodFails(t *testing.T) {
	syntheticCampaigns(t)
	var levels, winners int
	for seed := range uint64(honestyCampaigns / 4) {
		v := simulate(t, realBaseline, realBaseline, DefaultRounds, seed+1, Options{})
		b, vr := v.Scenario("baseline"), v.Scenario("variant")
		for _, c := range v.Levels {
			levels++
			if rule.Welch(b.Level(c).Samples, vr.Level(c).Samples).P() < DefaultAlpha {
				winners++
			}
		}
	}
	rate := float64(winners) / float64(levels)
	t.Logf("pooled within-launch samples, A/A: a winner at %d of %d levels (%.1f%%)", winners, levels, 100*rate)
	if rate <= 0.05 {
		t.Errorf("the broken method passes the A/A bound (%.1f%%): the bound has no teeth", 100*rate)
	}
}

// TestHonestyPower: a variant truly 5% slower (every step 1.05× longer) is
// found slower at 80% or more of levels at DefaultRounds.
func TestHonestyPower(t *testing.T) {
	syntheticCampaigns(t)
	slow := realBaseline
	slow.Slowdown = 1.05
	var tl tally
	for seed := range uint64(20) {
		tl.add(simulate(t, realBaseline, slow, DefaultRounds, 100+seed, Options{}), nil)
	}
	t.Logf("power, 5%% slower, %d rounds: %s", DefaultRounds, tl)
	if r := tl.rate(tl.slower); r < 0.80 {
		t.Errorf("found slower at %.1f%% of levels, want ≥ 80%%", 100*r)
	}
	if tl.faster > 0 {
		t.Errorf("the slower variant was called faster at %d levels", tl.faster)
	}
}

// TestHonestyCoverage: the speedup's 95% interval holds the true ratio at
// 90% or more of levels, for a like engine (the baseline 5% slower) and an
// unlike one (EAGLE-3 topk=4: speculative steps, accept-length noise).
func TestHonestyCoverage(t *testing.T) {
	syntheticCampaigns(t)
	slow := realBaseline
	slow.Slowdown = 1.05
	for _, tc := range []struct {
		name    string
		variant verdicttest.Engine
	}{
		{"like", slow},
		{"unlike", verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			truth := trueRatios(realBaseline, tc.variant)
			var tl tally
			for seed := range uint64(verdicttest.CoverageCampaigns) {
				tl.add(simulate(t, realBaseline, tc.variant, DefaultRounds, 200+seed, Options{}), truth)
			}
			t.Logf("coverage, %s: %s", tc.name, tl)
			if r := tl.rate(tl.covered); r < 0.90 {
				t.Errorf("the interval holds the truth at %.1f%% of levels, want ≥ 90%%", 100*r)
			}
		})
	}
}

// TestHonestyOneRound: launched once each, the same A/A campaigns leave
// launch-to-launch variation unmeasured; the minimum effect keeps the
// winners at 5% of levels or fewer, and the verdict says what it lacks.
func TestHonestyOneRound(t *testing.T) {
	syntheticCampaigns(t)
	var tl tally
	noted := 0
	for seed := range uint64(honestyCampaigns) {
		v := simulate(t, realBaseline, realBaseline, 1, seed+1, Options{})
		tl.add(v, nil)
		for _, n := range v.Notes {
			if n.Check == CheckRounds && n.Severity == SeverityWarn {
				noted++
				break
			}
		}
	}
	t.Logf("A/A, one round: %s", tl)
	if tl.rate(tl.winners) > 0.05 {
		t.Errorf("a winner at %.1f%% of levels, want ≤ 5%%", 100*tl.rate(tl.winners))
	}
	if noted != tl.campaigns {
		t.Errorf("%d of %d verdicts say that launch-to-launch variation was not measured", noted, tl.campaigns)
	}
}

// TestHonestyCrossover: EAGLE-3 topk=4 beats the baseline single-stream by
// 3% to 4% and loses under load; the reported crossover must bracket the
// model's, or say it cannot tell at C=1, never place a win elsewhere.
func TestHonestyCrossover(t *testing.T) {
	syntheticCampaigns(t)
	s := honestySweep()
	var modelFrom, modelTo int
	for i := 1; i < len(s.Concurrency); i++ {
		lo, hi := s.Concurrency[i-1], s.Concurrency[i]
		if verdicttest.Eagle3TopK4.Throughput(lo) > verdicttest.Baseline.Throughput(lo) &&
			verdicttest.Eagle3TopK4.Throughput(hi) <= verdicttest.Baseline.Throughput(hi) {
			modelFrom, modelTo = lo, hi
		}
	}
	if modelTo == 0 {
		t.Fatal("the model implies no crossover")
	}
	found := 0
	for seed := range uint64(5) {
		v := simulate(t, realBaseline, verdicttest.RealisticNoise(verdicttest.Eagle3TopK4), DefaultRounds, 300+seed, Options{})
		x := v.Crossovers[0]
		t.Log(x.Sentence)
		if x.StopsWinning == nil {
			continue
		}
		found++
		if x.StopsWinning.From.Concurrency > modelFrom || x.StopsWinning.To.Concurrency < modelTo {
			t.Errorf("seed %d: reported crossover %s..%s does not bracket the model's C=%d..%d",
				seed, x.StopsWinning.From, x.StopsWinning.To, modelFrom, modelTo)
		}
	}
	if found < 3 {
		t.Errorf("the crossover was found in %d of 5 campaigns, want 3 or more", found)
	}
}

// TestHonestyTable measures the figures docs/METHOD.md quotes for choosing
// the default rounds and correction: with BAKEOFF_HONESTY_TABLE=N, N
// campaigns per number of rounds (2 to 6), A/A and 5% slower, under both
// corrections, on the same simulated campaigns. Without it, it is skipped:
// it takes minutes.
func TestHonestyTable(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BAKEOFF_HONESTY_TABLE"))
	if n <= 0 {
		t.Skip("set BAKEOFF_HONESTY_TABLE=N to measure N campaigns per cell")
	}
	slow := realBaseline
	slow.Slowdown = 1.05
	s := honestySweep()
	for _, rounds := range []int{1, 2, 3, 4, 5, 6} {
		for _, tc := range []struct {
			name    string
			variant verdicttest.Engine
		}{{"A/A", realBaseline}, {"5% slower", slow}} {
			tallies := map[string]*tally{rule.CorrectionHolm: {}, rule.CorrectionBH: {}}
			for seed := range uint64(n) {
				ls := verdicttest.Campaign([]verdicttest.Engine{realBaseline, tc.variant}, s, rounds, 10000+seed)
				in := verdicttest.CampaignInput([]string{"baseline", "variant"}, s, rounds, ls)
				for corr, tl := range tallies {
					v, err := Judged(in, Options{Correction: corr})
					if err != nil {
						t.Fatal(err)
					}
					tl.add(v, nil)
				}
			}
			for _, corr := range []string{rule.CorrectionHolm, rule.CorrectionBH} {
				t.Logf("rounds %d, %s, %s: %s", rounds, tc.name, corr, tallies[corr])
			}
		}
	}
}
