package notes

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// The rounds note gives the pool's spread and df, not those of a level
// judged on its own variance, wherever that level falls in the sweep.
func TestRoundsNotePooledFigures(t *testing.T) {
	cell := func(name string, sd, df float64, noisy bool) verdict.Cell {
		return verdict.Cell{Scenario: name, Present: true, Compared: true, Comparison: verdict.Comparison{Method: verdict.MethodLaunches,
			Rounds: 4, RoundSDPct: sd, DF: df, NoisyLevel: noisy}}
	}
	for _, noisyAt := range []int{0, 1, 2} {
		v := &verdict.Verdict{Baseline: "baseline", Levels: []measure.Level{{Concurrency: 1}, {Concurrency: 2}, {Concurrency: 4}},
			Scenarios: []verdict.Scenario{{Name: "baseline", Status: "ok"}, {Name: "variant", Status: "ok"}}}
		for i, c := range v.Levels {
			vc := cell("variant", 2, 5, false)
			if i == noisyAt {
				vc = cell("variant", 30, 3, true)
			}
			v.Rows = append(v.Rows, verdict.Row{Level: c, Cells: []verdict.Cell{{Scenario: "baseline", Present: true}, vc}})
		}
		var text string
		for _, n := range checkRounds(v) {
			if n.Severity == verdict.SeverityInfo {
				text = n.Text
			}
		}
		if !strings.Contains(text, "±2.0%") || !strings.Contains(text, "5 df") {
			t.Errorf("noisy level %d: %q, want the pool's ±2.0%% and 5 df", noisyAt, text)
		}
	}
}
