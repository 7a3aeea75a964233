package contention

import (
	"slices"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

func TestCalls(t *testing.T) {
	cell := func(name, outcome string, delta float64) verdict.Cell {
		return verdict.Cell{Scenario: name, Compared: true, Comparison: verdict.Comparison{Outcome: outcome, DeltaPct: delta, PAdjusted: 0.01}}
	}
	base := verdict.Cell{Scenario: "a"}
	row := func(c int, winner string, cells ...verdict.Cell) verdict.Row {
		return verdict.Row{Level: measure.Level{Concurrency: c}, Winner: winner, Cells: append([]verdict.Cell{base}, cells...)}
	}
	for _, tt := range []struct {
		name                 string
		rows                 []verdict.Row
		want                 []string
		doubted, comparisons int
	}{
		{"ties and inconclusive are no call", []verdict.Row{
			row(1, "", cell("b", verdict.OutcomeTie, 0.3), cell("c", verdict.OutcomeInconclusive, -1.2)),
		}, nil, 0, 2},
		{"a loss, a win and a row's winner", []verdict.Row{
			row(1, "", cell("b", verdict.OutcomeSlower, -3), cell("c", verdict.OutcomeTie, 0)),
			row(4, "c", cell("b", verdict.OutcomeTie, 0), cell("c", verdict.OutcomeFaster, 4)),
		}, []string{
			"C=1: b slower than a, -3.0% (p_adj=0.010)",
			"C=4: c faster than a, +4.0% (p_adj=0.010)",
			"C=4: c wins the row",
		}, 0, 4},
		{"doubted comparisons are counted, not called", []verdict.Row{
			row(16, "", cell("b", verdict.OutcomeDoubted, -9), cell("c", verdict.OutcomeDoubted, 9)),
		}, nil, 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := &verdict.Verdict{Baseline: "a", Rows: tt.rows}
			var got []string
			for _, c := range Calls(v) {
				got = append(got, c.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Calls:\n got %q\nwant %q", got, tt.want)
			}
			if d, n := Doubted(v); d != tt.doubted || n != tt.comparisons {
				t.Errorf("Doubted = %d of %d, want %d of %d", d, n, tt.doubted, tt.comparisons)
			}
		})
	}
}
