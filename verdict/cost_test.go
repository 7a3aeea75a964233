package verdict

import (
	"testing"

	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestCostQuotesTheTablesMDE: the cost line's MDE is the largest a cell or
// a capacity line shows, and a comparison of a capacity known only as a
// one-sided bound is said to be one, decided, inconclusive or open. A busy
// demo's line read "13 inconclusive (MDE > 100%)" beside tables whose every
// MDE was 12–48%: the figure was a bounded capacity's ("<30 users",
// interval [9.5, 94]), which no line showed.
func TestCostQuotesTheTablesMDE(t *testing.T) {
	cell := func(outcome string, mde float64, open bool) Cell {
		return Cell{Scenario: "spec", Present: true, Compared: true,
			Comparison: Comparison{Outcome: outcome, MDEPct: mde, Open: open}}
	}
	capacity := func(outcome string, mde float64, censored, open bool) CapacityComparison {
		return CapacityComparison{Variant: "spec", Censored: censored,
			Comparison: Comparison{Outcome: outcome, MDEPct: mde, Open: open}}
	}
	for _, tc := range []struct {
		name       string
		cells      []Cell
		capacities []CapacityComparison
		sequential *SequentialVerdict
		want       string
		wantMDE    float64
	}{
		{"a bounded capacity left inconclusive",
			[]Cell{cell(OutcomeInconclusive, 12, false), cell(OutcomeInconclusive, 48, false), cell(OutcomeSlower, 91.8, false)},
			[]CapacityComparison{capacity(OutcomeInconclusive, 350, true, false)}, nil,
			"decided 1 of 4 comparisons with the baseline with 2 launches; 3 inconclusive (MDE 48.0%; 1 against a one-sided capacity bound)", 48},
		{"a bounded capacity decided",
			[]Cell{cell(OutcomeInconclusive, 12, false), cell(OutcomeSlower, 30, false)},
			[]CapacityComparison{capacity(OutcomeSlower, 350, true, false)}, nil,
			"decided 2 of 3 comparisons with the baseline (1 against a one-sided capacity bound) with 2 launches; 1 inconclusive (MDE 12.0%)", 12},
		{"the only inconclusive one is bounded",
			[]Cell{cell(OutcomeSlower, 30, false)},
			[]CapacityComparison{capacity(OutcomeInconclusive, 350, true, false)}, nil,
			"decided 1 of 2 comparisons with the baseline with 2 launches; 1 inconclusive (1 against a one-sided capacity bound)", 0},
		{"an exact capacity's MDE is its line's",
			[]Cell{cell(OutcomeInconclusive, 12, false)},
			[]CapacityComparison{capacity(OutcomeInconclusive, 20.5, false, false)}, nil,
			"decided 0 of 2 comparisons with the baseline with 2 launches; 2 inconclusive (MDE 20.5%)", 20.5},
		{"sequential: a bounded capacity still open",
			[]Cell{cell(OutcomeInconclusive, 12, false), cell(OutcomeInconclusive, 60, true)},
			[]CapacityComparison{capacity(OutcomeInconclusive, 350, true, true)},
			&SequentialVerdict{MinRounds: 1, MaxRounds: 4, Variants: []VariantStop{{Variant: "spec", Comparisons: 3, Inconclusive: 1}}},
			"decided 0 of 3 comparisons with the baseline with 2 launches (the fixed design: 8); 1 inconclusive (MDE 12.0%); 2 open (1 against a one-sided capacity bound)", 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &Verdict{Baseline: "base", Sequential: tc.sequential,
				Scenarios: []Scenario{{Name: "base", Launches: []LaunchInfo{{Round: 1}}}, {Name: "spec", Launches: []LaunchInfo{{Round: 1}}}}}
			for i, c := range tc.cells {
				v.Rows = append(v.Rows, Row{Level: measure.Level{Concurrency: i + 1}, Cells: []Cell{{Scenario: "base", Present: true}, c}})
			}
			if tc.capacities != nil {
				v.Capacity = &CapacityVerdict{Comparisons: tc.capacities}
			}
			cc := Cost(v, nil)
			if cc.Sentence != tc.want {
				t.Errorf("sentence\n%s\nwant\n%s", cc.Sentence, tc.want)
			}
			if cc.MaxMDEPct != tc.wantMDE {
				t.Errorf("MaxMDEPct %v, want %v", cc.MaxMDEPct, tc.wantMDE)
			}
		})
	}
}

// TestCostHostLoad: the cost carries the host's load around the counted
// launches' sweeps, the mean of each launch's readings and the largest,
// with the CPU pressure where the kernel gave it; none without readings.
func TestCostHostLoad(t *testing.T) {
	psi := func(x float64) *float64 { return &x }
	state := func(before, after float64, p *float64) *hoststate.Launch {
		return &hoststate.Launch{Before: &hoststate.State{Load1: before, CPUSome10: p}, After: &hoststate.State{Load1: after, CPUSome10: p}}
	}
	v := &Verdict{Baseline: "base", Scenarios: []Scenario{
		{Name: "base", Launches: []LaunchInfo{{Round: 1}, {Round: 2}}},
		{Name: "spec", Launches: []LaunchInfo{{Round: 1}, {Round: 2}}},
	}}
	run := &results.Run{Summary: results.Summary{Scenarios: []results.ScenarioResult{
		{Name: "base", Round: 1, HostState: state(8, 10, psi(30))},
		{Name: "spec", Round: 1, HostState: state(9, 9, psi(50))},
		{Name: "base", Round: 2, HostState: state(2, 2, nil)},
		{Name: "spec", Round: 2},
	}}}
	got := Cost(v, run).Load
	if got == nil {
		t.Fatal("no host load")
	}
	if got.Load1 != 20.0/3 || got.Load1Max != 9 || got.Launches != 3 || got.CPUSomePct == nil || *got.CPUSomePct != 40 {
		t.Errorf("host load %+v (CPU %v), want load %.3f, at most 9, over 3 launches, CPU 40%%", *got, got.CPUSomePct, 20.0/3)
	}
	run.Summary.Scenarios = nil
	if got := Cost(v, run).Load; got != nil {
		t.Errorf("a run without readings has a host load: %+v", *got)
	}
}

// TestStopLineSaysBoundsApart: a variant's stop line says its inconclusive
// comparisons as the cost line does: the largest MDE a table shows, and a
// capacity known only as a one-sided bound apart, never its MDE (past 100%
// where the bound is far from the levels) as the variant's.
func TestStopLineSaysBoundsApart(t *testing.T) {
	for _, tc := range []struct {
		vs   VariantStop
		want string
	}{
		{VariantStop{Inconclusive: 2, MaxMDEPct: 4.8}, "MDE 4.8%"},
		{VariantStop{Inconclusive: 2, MaxMDEPct: 4.8, Bounded: 1}, "MDE 4.8%; 1 against a one-sided capacity bound"},
		{VariantStop{Inconclusive: 1, Bounded: 1}, "1 against a one-sided capacity bound"},
	} {
		if got := stopMDE(tc.vs); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.vs, got, tc.want)
		}
	}
}
