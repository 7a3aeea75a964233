package explain

import (
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

func cellsOf(deltas []float64, outcomes string) []verdict.Cell {
	out := make([]verdict.Cell, len(deltas))
	names := map[byte]string{'+': verdict.OutcomeFaster, '-': verdict.OutcomeSlower, '=': verdict.OutcomeTie, '?': verdict.OutcomeInconclusive}
	for i := range deltas {
		out[i] = verdict.Cell{Compared: true, Comparison: verdict.Comparison{DeltaPct: deltas[i], Outcome: names[outcomes[i]],
			PAdjusted: 0.0004, MDEPct: 3.2}}
	}
	return out
}

func TestCrossoverSentences(t *testing.T) {
	for _, tc := range []struct {
		name     string
		levels   []int
		deltas   []float64
		outcomes string
		want     string
		stops    *verdict.Bracket
		starts   *verdict.Bracket
	}{
		{"the seeds' story", []int{1, 2, 5, 250}, []float64{3.8, 1, -20, -54}, "+?--",
			"x: +3.8% at C=1 (p<0.001); inconclusive at C=2; loses from C=5 on, down to −54.0% at C=250",
			&verdict.Bracket{From: measure.ConcurrencyLevel(1), To: measure.ConcurrencyLevel(2)}, &verdict.Bracket{From: measure.ConcurrencyLevel(2), To: measure.ConcurrencyLevel(5)}},
		{"wins everywhere", []int{1, 2}, []float64{3, 7}, "++",
			"x: wins at every level (C=1 to C=2), up to +7.0% at C=2 (p<0.001)", nil, nil},
		{"loses everywhere", []int{1, 2}, []float64{-3, -1}, "--",
			"x: loses at every level (C=1 to C=2), down to −3.0% at C=1 (p<0.001)", nil, nil},
		{"ties everywhere", []int{1, 2, 5}, []float64{0.1, -0.2, 1}, "===",
			"x: ties at every level (C=1 to C=5)", nil, nil},
		{"cannot tell anywhere", []int{1, 2, 5}, []float64{0.1, -0.2, 1}, "???",
			"x: inconclusive at every level (C=1 to C=5): differences under ±3.2% could not be detected", nil, nil},
		{"wins, ties, then cannot tell", []int{1, 2, 5, 10, 30}, []float64{4, 5, 0, 1, 2}, "++=??",
			"x: wins from C=1 to C=2, up to +5.0% at C=2; tie at C=5; inconclusive from C=10 on", &verdict.Bracket{From: measure.ConcurrencyLevel(2), To: measure.ConcurrencyLevel(5)}, nil},
		{"tie and can't tell are told apart", []int{1, 2, 5}, []float64{0, 0, -9}, "=?-",
			"x: tie at C=1; inconclusive at C=2; −9.0% at C=5 (p<0.001)", nil, &verdict.Bracket{From: measure.ConcurrencyLevel(2), To: measure.ConcurrencyLevel(5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := crossoverOf("x", verdicttest.Concurrencies(tc.levels...), cellsOf(tc.deltas, tc.outcomes))
			if x.Sentence != tc.want {
				t.Errorf("sentence\n got %s\nwant %s", x.Sentence, tc.want)
			}
			if !eqBracket(x.StopsWinning, tc.stops) || !eqBracket(x.StartsLosing, tc.starts) {
				t.Errorf("brackets stops=%v starts=%v, want %v %v", x.StopsWinning, x.StartsLosing, tc.stops, tc.starts)
			}
		})
	}
}

func eqBracket(a, b *verdict.Bracket) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
