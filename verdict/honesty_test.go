package verdict

import (
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// Honesty on synthetic campaigns: the records come from verdicttest's model
// of a continuous-batching server (seed-calibrated), so the true difference
// between the variants is known exactly.

func pairInput(base, variant []measure.Record, s verdicttest.Sweep) Input {
	return Input{
		Manifest: results.Manifest{Campaign: "synthetic", Baseline: "baseline",
			Scenarios: []string{"baseline", "variant"},
			Sweep:     results.SweepInfo{MaxTokens: s.MaxTokens, IgnoreEOS: true, PromptSet: s.PromptSet}},
		Records: map[string][]measure.Record{"baseline": base, "variant": variant},
	}
}

// campaigns runs n synthetic two-scenario campaigns and counts, over every
// level of every campaign, the rows with a winner and the rows won by the
// baseline.
func campaigns(t *testing.T, n int, base, variant verdicttest.Engine) (levels, winners, baseWins int) {
	t.Helper()
	s := verdicttest.DefaultSweep()
	for seed := range uint64(n) {
		a := verdicttest.Simulate(base, s, 2*seed+1)
		b := verdicttest.Simulate(variant, s, 2*seed+2)
		v, err := FromRecords(pairInput(a, b, s), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range v.Rows {
			levels++
			if row.Winner != "" {
				winners++
			}
			if row.Winner == "baseline" {
				baseWins++
			}
		}
	}
	return levels, winners, baseWins
}

// TestAANoWinner: the baseline against an identical copy of itself (other
// noise seeds) must come out a tie at 95% or more of levels.
func TestAANoWinner(t *testing.T) {
	levels, winners, _ := campaigns(t, 40, verdicttest.Baseline, verdicttest.Baseline)
	rate := float64(winners) / float64(levels)
	t.Logf("A/A: a winner at %d of %d levels (%.1f%%)", winners, levels, 100*rate)
	if rate > 0.05 {
		t.Errorf("A/A false-positive rate %.1f%% > 5%%", 100*rate)
	}
}

// TestPowerFivePercent: a variant truly 5% slower must be found slower at
// 80% or more of levels with the default sweep.
func TestPowerFivePercent(t *testing.T) {
	slow := verdicttest.Baseline
	slow.Slowdown = 1.05
	levels, _, baseWins := campaigns(t, 20, verdicttest.Baseline, slow)
	rate := float64(baseWins) / float64(levels)
	t.Logf("power: the 5%% slower variant lost at %d of %d levels (%.1f%%)", baseWins, levels, 100*rate)
	if rate < 0.80 {
		t.Errorf("power %.1f%% < 80%%", 100*rate)
	}
}

// TestCrossoverBrackets: EAGLE-3 topk=4 beats the baseline single-stream and
// loses under load; the reported crossover must bracket the model's.
func TestCrossoverBrackets(t *testing.T) {
	s := verdicttest.DefaultSweep()
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
	for seed := range uint64(5) {
		a := verdicttest.Simulate(verdicttest.Baseline, s, 10*seed+1)
		b := verdicttest.Simulate(verdicttest.Eagle3TopK4, s, 10*seed+2)
		v, err := FromRecords(pairInput(a, b, s), Options{})
		if err != nil {
			t.Fatal(err)
		}
		x := v.Crossovers[0]
		t.Log(x.Sentence)
		if x.StopsWinning == nil {
			t.Fatalf("seed %d: no crossover reported: %s", seed, x.Sentence)
		}
		if x.StopsWinning.From > modelFrom || x.StopsWinning.To < modelTo {
			t.Errorf("seed %d: reported crossover C=%d..%d does not bracket the model's C=%d..%d",
				seed, x.StopsWinning.From, x.StopsWinning.To, modelFrom, modelTo)
		}
	}
}
