package explain

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// breakEvenSweep is the seeds' sweep without its two costliest levels:
// the crossing below lies between C=10 and C=30.
func breakEvenSweep() verdicttest.Sweep {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 2, 5, 10, 30, 70}
	return s
}

// crossingEngine gains 1.6 tokens a step at a step cost that grows faster
// with the batch than the baseline's: +7% at C=10, −9% at C=30, its
// speedup crossing 1 near C=15.
var crossingEngine = verdicttest.Engine{StepBase: 0.01084, StepPerSeq: 0.0023, PrefillPerToken: 0.00002,
	AcceptLength: 1.6, MaxRunning: 256, Noise: 0.05, Drift: 0.005, DriftTau: 2}

// breakEvenCampaigns is how many campaigns each break-even figure is
// measured on; BAKEOFF_BREAKEVEN_CAMPAIGNS overrides it.
func breakEvenCampaigns() int {
	if n, err := strconv.Atoi(os.Getenv("BAKEOFF_BREAKEVEN_CAMPAIGNS")); err == nil && n > 0 {
		return n
	}
	return 40
}

// trueCrossing is the break-even the method estimates, from the true log
// ratios: the first zero of their interpolation in log-load between from
// and to.
func trueCrossing(truth map[measure.Level]float64, levels []measure.Level, from, to measure.Level) float64 {
	var xs, ds []float64
	for _, c := range levels {
		if c.Compare(from) >= 0 && c.Compare(to) <= 0 {
			xs, ds = append(xs, math.Log(measure.LevelValue(c))), append(ds, truth[c])
		}
	}
	for j := 0; j+1 < len(xs); j++ {
		if ds[j] > 0 && ds[j+1] <= 0 {
			return math.Exp(xs[j] + (xs[j+1]-xs[j])*ds[j]/(ds[j]-ds[j+1]))
		}
	}
	return math.NaN()
}

// TestBreakEvenCoverage: on a variant whose speedup crosses 1 between two
// levels, the break-even's interval holds the true crossing (the true
// ratios interpolated the same way) in at least 90% of campaigns, a
// campaign that claims none counting as a miss.
func TestBreakEvenCoverage(t *testing.T) {
	t.Parallel()
	s := breakEvenSweep()
	variant := verdicttest.RealisticNoise(crossingEngine)
	truth := verdicttest.TrueLogRatios(realBaseline, variant, s)
	var levels []measure.Level
	for _, c := range s.Concurrency {
		levels = append(levels, measure.ConcurrencyLevel(c))
		t.Logf("true speedup at C=%d: %.4f", c, math.Exp(truth[measure.ConcurrencyLevel(c)]))
	}
	n := breakEvenCampaigns()
	covered, claimed := 0, 0
	var width float64
	for seed := range uint64(n) {
		ls := verdicttest.Campaign([]verdicttest.Engine{realBaseline, variant}, s, verdict.DefaultRounds, 4000+seed)
		v, err := explained(verdicttest.CampaignInput([]string{"baseline", "variant"}, s, verdict.DefaultRounds, ls), verdict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		be := v.Crossovers[0].BreakEven
		if be == nil || be.Kind != verdict.BreakEvenCrosses {
			t.Logf("seed %d: no break-even: %+v", seed, be)
			continue
		}
		claimed++
		want := trueCrossing(truth, levels, be.From, be.To)
		width += math.Log(be.Hi / be.Lo)
		if be.Lo <= want && want <= be.Hi {
			covered++
		} else {
			t.Logf("seed %d: true %.2f outside %s", seed, want, be.Sentence)
		}
	}
	t.Logf("break-even claimed in %d of %d campaigns; the interval holds the truth in %d (%.1f%%); mean width ×%.2f",
		claimed, n, covered, 100*float64(covered)/float64(n), math.Exp(width/float64(max(claimed, 1))))
	if float64(covered) < 0.9*float64(n) {
		t.Errorf("the break-even interval holds the truth in %d of %d campaigns, want ≥ 90%%", covered, n)
	}
}

// TestBreakEvenNoCrossing: a variant whose speedup does not cross 1 (the
// baseline against itself; a variant 5% slower at every level) gets no
// break-even in at least 95% of campaigns.
func TestBreakEvenNoCrossing(t *testing.T) {
	t.Parallel()
	s := breakEvenSweep()
	slow := realBaseline
	slow.Slowdown = 1.05
	n := breakEvenCampaigns()
	for _, tc := range []struct {
		name    string
		variant verdicttest.Engine
	}{{"A/A", realBaseline}, {"5% slower", slow}} {
		claims := 0
		kinds := map[string]int{}
		for seed := range uint64(n) {
			ls := verdicttest.Campaign([]verdicttest.Engine{realBaseline, tc.variant}, s, verdict.DefaultRounds, 5000+seed)
			v, err := explained(verdicttest.CampaignInput([]string{"baseline", "variant"}, s, verdict.DefaultRounds, ls), verdict.Options{})
			if err != nil {
				t.Fatal(err)
			}
			be := v.Crossovers[0].BreakEven
			kinds[be.Kind]++
			if be.Kind == verdict.BreakEvenCrosses {
				claims++
				t.Logf("%s seed %d: %s", tc.name, seed, be.Sentence)
			}
		}
		t.Logf("%s: a break-even claimed in %d of %d campaigns (%v)", tc.name, claims, n, kinds)
		if float64(claims) > 0.05*float64(n) {
			t.Errorf("%s: a break-even claimed in %d of %d campaigns, want ≤ 5%%", tc.name, claims, n)
		}
	}
}

// TestBreakEvenSentences holds the crossover sentence, the figures that
// explain the turn and the break-even line of fixed campaigns in a golden
// file: a crossing on vLLM and on SGLang (a suggestion only where the
// engine has the setting), with the acceptance and the server's batch the
// synthetic engine does not produce set by hand at each level; the same
// crossing by a variant with no speculative step (a flag flip: the server's
// batch but no accept length), which gets no why and no batch or setting at
// its break-even; a variant slower everywhere (a bound); the baseline
// against itself (none).
func TestBreakEvenSentences(t *testing.T) {
	s := breakEvenSweep()
	slow := realBaseline
	slow.Slowdown = 1.05
	var out strings.Builder
	for _, tc := range []struct {
		name, engine  string
		variant       verdicttest.Engine
		figures, spec bool
	}{
		{"crossing on vllm", "vllm", verdicttest.RealisticNoise(crossingEngine), true, true},
		{"crossing on sglang", "sglang", verdicttest.RealisticNoise(crossingEngine), true, true},
		{"crossing, no figures", "", verdicttest.RealisticNoise(crossingEngine), false, false},
		{"crossing on vllm, no speculative step", "vllm", verdicttest.RealisticNoise(crossingEngine), true, false},
		{"5% slower", "vllm", slow, false, false},
		{"A/A", "vllm", realBaseline, false, false},
	} {
		ls := verdicttest.Campaign([]verdicttest.Engine{realBaseline, tc.variant}, s, verdict.DefaultRounds, 4000)
		v, err := explained(verdicttest.CampaignInput([]string{"baseline", "variant"}, s, verdict.DefaultRounds, ls), verdict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.figures {
			sc := v.Scenario("variant")
			for i := range sc.Levels {
				l := &sc.Levels[i]
				c := float64(l.Level.Concurrency)
				a := 1.6 + 0.01*float64(i%3)
				if tc.spec {
					l.Accept = &verdict.LevelAccept{Length: verdict.Estimate{Center: a, Lo: a - 0.05, Hi: a + 0.05, Confidence: 0.95, N: 6}}
				}
				l.Server = &measure.ServerSummary{Running: &measure.GaugeStats{Mean: 0.97 * c, P50: c, Max: c}}
			}
		}
		explainCrossovers(v, map[string]string{"variant": tc.engine})
		x := v.Crossovers[0]
		fmt.Fprintf(&out, "%s\n  %s\n  why: %s\n  break-even (%s): %s\n", tc.name, x.Sentence, x.Why, x.BreakEven.Kind, x.BreakEven.Sentence)
	}
	golden.Check(t, filepath.Join("testdata", "breakeven.golden"), []byte(out.String()))
}
