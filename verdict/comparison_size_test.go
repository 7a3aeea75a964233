package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// Error rates of a single comparison under the sequential rule. The
// campaign-level A/A figure (TestSequentialAA) cannot see a comparison that
// errs a little too often: Holm over eight levels that move together is far
// from its bound. Here each simulated campaign contributes one comparison,
// one level of a baseline and a variant, tested alone at α: the rule's
// per-comparison size (a win or loss called when nothing differs) and its
// false-tie rate (a tie called when the difference sits on the margin),
// each of which must be at most α. The data are paired rounds in the
// orchestrator's launch order (campaign.LaunchOrder), with a launch effect,
// level noise, a linear drift over the night and a drift that wanders on
// the scale of a launch; they go through comparePaired and the sequential
// rule's own view, boundaries and tie test, as compareSequential uses them.
// BAKEOFF_SEQUENTIAL_CAMPAIGNS=N runs N comparisons per figure and every
// noise case (make sequential); make test runs the worst case on 4000.

// sizeNoise is the noise of one simulated comparison, in log units.
type sizeNoise struct {
	name     string
	launchSD float64 // each launch's speed factor
	levelSD  float64 // each level of a launch on its own
	driftPer float64 // a linear drift per launch over the night
	wanderSD float64 // a drift that wanders (Ornstein–Uhlenbeck)...
	wanderA  float64 // ...keeping this share of itself from one launch to the next
}

// sizeCases are the noises measured: the worst case first.
var sizeCases = []sizeNoise{
	{"wandering drift 2%, linear 0.5%/launch", 0.01, 0.005, 0.005, 0.02, 0.4},
	{"wandering drift 1.5%, linear 0.5%/launch", 0.005, 0.005, 0.005, 0.015, 0.5},
	{"linear drift 1%/launch", 0.01, 0.005, 0.01, 0, 0},
	{"launches 2%, linear drift 1%/launch", 0.02, 0.005, 0.01, 0, 0},
	{"levels independent 1.5%", 0.01, 0.015, 0.005, 0, 0},
	{"no drift", 0.01, 0.005, 0, 0, 0},
}

// sizeLevels is the levels of a simulated campaign: enough for the pooled
// df of the rule, few enough to be quick.
const sizeLevels = 3

// simComparison simulates one campaign of a baseline and a variant over
// rounds rounds in the orchestrator's launch order, the variant's true log
// ratio delta at every level, and returns the two scenarios' levels.
func simComparison(rng *rand.Rand, nz sizeNoise, rounds int, delta float64) (base, variant []Level) {
	return simLevels(rng, nz, rounds, delta, sizeLevels)
}

// simLevels is simComparison over levels levels, which share each launch's
// offset as a real launch's levels do.
func simLevels(rng *rand.Rand, nz sizeNoise, rounds int, delta float64, levels int) (base, variant []Level) {
	mk := func() []Level {
		out := make([]Level, levels)
		for c := range out {
			out[c].Level = measure.ConcurrencyLevel(1 << c)
		}
		return out
	}
	base, variant = mk(), mk()
	pos := 0
	wander := nz.wanderSD * rng.NormFloat64()
	for r, row := range campaign.LaunchOrder([]string{"baseline", "variant"}, rounds) {
		for _, name := range row {
			side, d := base, 0.0
			if name == "variant" {
				side, d = variant, delta
			}
			off := nz.launchSD*rng.NormFloat64() + nz.driftPer*float64(pos) + wander
			wander = nz.wanderA*wander + math.Sqrt(1-nz.wanderA*nz.wanderA)*nz.wanderSD*rng.NormFloat64()
			for c := range side {
				y := d + off + nz.levelSD*rng.NormFloat64()
				side[c].Launches = append(side[c].Launches, LaunchLevel{Round: r + 1, Order: pos, Throughput: 100 * math.Exp(y)})
			}
			pos++
		}
	}
	return base, variant
}

// sizeTally counts a rule's outcomes over simulated comparisons.
type sizeTally struct{ n, called, ties int }

func (s sizeTally) calledRate() float64 { return float64(s.called) / float64(max(s.n, 1)) }
func (s sizeTally) tieRate() float64    { return float64(s.ties) / float64(max(s.n, 1)) }

// comparisonRates runs n comparisons with true log ratio delta through the
// sequential rule (seq) and through the rule as it was before the
// correlation of consecutive rounds was taken in (old: the plain paired
// standard error, the same boundaries): each comparison closes at its first
// look that calls it or ties it.
func comparisonRates(plan SequentialPlan, nz sizeNoise, n int, seed uint64, delta float64) (seq, old sizeTally) {
	plan = plan.Normalised()
	const alpha = 0.05
	lo, hi := rule.TieBounds(DefaultEquivalenceMarginPct)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	key := measure.ConcurrencyLevel(1)
	for range n {
		b, v := simComparison(rng, nz, plan.MaxRounds, delta)
		var looks []float64
		seqOpen, oldOpen := true, true
		for k := plan.MinRounds; k <= plan.MaxRounds && (seqOpen || oldOpen); k++ {
			cs, _ := compareLevels(levelsUpTo(b, k, nil), levelsUpTo(v, k, nil), true, DefaultConfidence, nil)
			c := cs[key]
			looks = append(looks, float64(k)/float64(plan.MaxRounds))
			judge := func(e rule.Diff, t *sizeTally, open *bool) {
				if !*open {
					return
				}
				// In the rule's order (compareSequential): a look that
				// can call the comparison a tie does so before it tests
				// for a difference.
				switch {
				case plan.Ties(e, looks, alpha, lo, hi):
					t.ties++
				case plan.Rejects(e, looks, alpha):
					t.called++
				default:
					return
				}
				*open = false
			}
			judge(sequentialView(c).est, &seq, &seqOpen)
			judge(c.est, &old, &oldOpen)
		}
		seq.n++
		old.n++
	}
	return seq, old
}

// binomialBound is the most successes in n trials of probability p that a
// method whose rate is p exceeds only 1% of the time (the normal
// approximation, which at n in the thousands and p = 0.05 is close).
func binomialBound(n int, p float64) int {
	mean := float64(n) * p
	return int(math.Floor(mean + 2.326*math.Sqrt(mean*(1-p))))
}

// TestComparisonSizeOrderDrift: a single comparison's size and false-tie
// rate are at most α = 5%, up to a binomial allowance a correct rule
// exceeds 1% of the time; and the rule without the serial correction fails
// the size bound in the worst case, so the bound has teeth.
func TestComparisonSizeOrderDrift(t *testing.T) {
	n, cases := 4000, sizeCases[:1]
	if k, err := strconv.Atoi(os.Getenv("BAKEOFF_SEQUENTIAL_CAMPAIGNS")); err == nil && k > 0 {
		n, cases = max(k*20, n), sizeCases
	}
	plan := SequentialPlan{MinRounds: 3, MaxRounds: 12}
	bound := binomialBound(n, 0.05)
	for i, nz := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			seq, old := comparisonRates(plan, nz, n, 7000+uint64(i), 0)
			t.Logf("%s, no difference: called %d of %d (%.2f%%), the rule without the serial correction %d (%.2f%%); tie %.1f%% and %.1f%%; bound %d",
				nz.name, seq.called, n, 100*seq.calledRate(), old.called, 100*old.calledRate(), 100*seq.tieRate(), 100*old.tieRate(), bound)
			if seq.called > bound {
				t.Errorf("size %.2f%% over %d comparisons, want ≤ 5%% (at most %d calls)", 100*seq.calledRate(), n, bound)
			}
			if i == 0 && old.called <= bound {
				t.Errorf("the rule without the serial correction calls %d of %d, within the bound %d: the bound has no teeth here", old.called, n, bound)
			}
			for _, side := range []float64{-1, 1} {
				delta := side * math.Log1p(DefaultEquivalenceMarginPct/100)
				if side < 0 {
					delta = math.Log1p(-DefaultEquivalenceMarginPct / 100)
				}
				seq, old := comparisonRates(plan, nz, n, 8000+uint64(i)+uint64(side+1), delta)
				t.Logf("%s, on the margin (%+.0f%%): tie %d of %d (%.2f%%), without the serial correction %d (%.2f%%); bound %d",
					nz.name, 100*math.Expm1(delta), seq.ties, n, 100*seq.tieRate(), old.ties, 100*old.tieRate(), bound)
				if seq.ties > bound {
					t.Errorf("false ties %.2f%% at %+.0f%% over %d comparisons, want ≤ 5%% (at most %d)", 100*seq.tieRate(), 100*math.Expm1(delta), n, bound)
				}
			}
		})
	}
}
