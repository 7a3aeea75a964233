package measure_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// biasSeeds is how many launches each case is measured over.
const biasSeeds = 8

// biasBound is the largest mean relative error, over biasSeeds launches, that
// the steady-state throughput or the mean of the within-launch samples may
// show against the exact production of the synthetic engine. The turnover
// samples this replaced were −3.6% at C=250 on a speculative-shaped engine.
const biasBound = 0.003

// firstBound bounds the mean error of the first sample against the truth in
// its own sub-window: the sample completions-based samples biased most, since
// it starts with nothing partly decoded. sampleBound bounds every sample's
// error in every launch.
const (
	firstBound  = 0.005
	sampleBound = 0.01
)

// TestThroughputUnbiased checks the steady-state throughput and the mean of
// the within-launch samples against the truth: the tokens the synthetic
// engine produced inside the steady-state window, counted step by step. A
// speculative-shaped engine (several tokens per step, drawn per sequence, so
// completion times disperse) is the hard case, and a running cap of 48 below
// the concurrency queues requests, which disperses them further.
func TestThroughputUnbiased(t *testing.T) {
	capped := verdicttest.Eagle3TopK4
	capped.MaxRunning = 48
	cases := []struct {
		name   string
		e      verdicttest.Engine
		levels []int
	}{
		{"baseline", verdicttest.Baseline, []int{1, 10, 70, 250}},
		{"speculative", verdicttest.Eagle3TopK4, []int{1, 10, 70, 250}},
		{"speculative, running cap 48", capped, []int{70, 250}},
	}
	var report strings.Builder
	for _, tc := range cases {
		s := verdicttest.DefaultSweep()
		s.Concurrency = tc.levels
		steady := map[int][]float64{}
		sampled := map[int][]float64{}
		firstSample := map[int][]float64{}
		worstSample := map[int]float64{}
		for seed := range uint64(biasSeeds) {
			recs, prod := verdicttest.SimulateProduction(tc.e, s, seed+1)
			for _, c := range tc.levels {
				var rs []measure.Record
				for _, r := range recs {
					if !r.Warmup && r.Level == measure.ConcurrencyLevel(c) {
						rs = append(rs, r)
					}
				}
				tp := measure.LevelThroughput(rs, measure.ConcurrencyLevel(c), 10)
				truth := prod[verdicttest.LevelKey{Level: c}].TokensIn(tp.Window) / tp.Window.Seconds()
				steady[c] = append(steady[c], tp.TokS/truth-1)
				sampled[c] = append(sampled[c], mean(tp.Samples)/truth-1)
				// Each sample against the truth of its own sub-window.
				p, k := prod[verdicttest.LevelKey{Level: c}], int64(len(tp.Samples))
				span := tp.Window.End - tp.Window.Start
				for i, x := range tp.Samples {
					w := measure.Window{Start: tp.Window.Start + span*int64(i)/k, End: tp.Window.Start + span*int64(i+1)/k}
					e := x/(p.TokensIn(w)/w.Seconds()) - 1
					if i == 0 {
						firstSample[c] = append(firstSample[c], e)
					}
					worstSample[c] = max(worstSample[c], math.Abs(e))
				}
			}
		}
		for _, c := range tc.levels {
			bs, bm, bf := mean(steady[c]), mean(sampled[c]), mean(firstSample[c])
			fmt.Fprintf(&report, "%-28s C=%3d  steady %+6.2f%%  mean of samples %+6.2f%%  first sample %+6.2f%%  worst sample %5.2f%%\n",
				tc.name, c, 100*bs, 100*bm, 100*bf, 100*worstSample[c])
			if math.Abs(bs) > biasBound || math.Abs(bm) > biasBound {
				t.Errorf("%s C=%d: bias steady %+.2f%%, mean of samples %+.2f%%; want within ±%.1f%%",
					tc.name, c, 100*bs, 100*bm, 100*biasBound)
			}
			if math.Abs(bf) > firstBound || worstSample[c] > sampleBound {
				t.Errorf("%s C=%d: first sample %+.2f%% on average, worst sample %.2f%% off; want within ±%.1f%% and %.0f%%",
					tc.name, c, 100*bf, 100*worstSample[c], 100*firstBound, 100*sampleBound)
			}
		}
	}
	t.Logf("relative error against the exact production, mean of %d launches:\n%s", biasSeeds, report.String())
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
