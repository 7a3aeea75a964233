package main

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/plan"
)

// planInputs is one level at C=1 with the `auto` count as its floor and ten
// times it as its ceiling, two scenarios, ten-minute launches, and the
// round's noise split as given (standard deviations of the log ratio, the
// within part at the auto count).
func planInputs(launchSD, withinSD float64, maxRounds int) plan.Inputs {
	lv := measure.ConcurrencyLevel(1)
	auto := measure.RequestsAt(0, lv)
	return plan.Inputs{
		Levels:    []plan.Level{{Key: lv, PerRequest: 2, Min: auto, Max: auto * maxPlannedFactor}},
		Launch:    600,
		Scenarios: 2,
		Noise:     []plan.Noise{{Level: 0, Launch: launchSD * launchSD, Within: withinSD * withinSD * float64(auto)}},
		Past:      [][]int{{auto}, {auto}, {auto}},
		Goal:      plan.Goal{MarginPct: 2, Family: 1, MinRounds: 3, MaxRounds: maxRounds},
	}
}

// TestNextRequests: without a budget the planner's requests are taken only
// when they reach the margin (a night with no limit is not spent on a
// difference it cannot show); with one, the most precise plan that fits is
// taken, reached or not, and nothing when not one round fits.
func TestNextRequests(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        plan.Inputs
		left      float64 // seconds; negative: no budget
		wantScale bool    // a scale above the auto count
		wantLine  string
	}{
		{"no budget, within-launch noise: the plan reaches the margin",
			planInputs(0.004, 0.03, 12), -1, true, "to bring the MDE to ±2.0%"},
		{"no budget, out of reach: the campaign's requests are kept",
			planInputs(0.06, 0.06, 4), -1, false, "the campaign's requests are kept"},
		{"a budget, out of reach: the most precise plan that fits",
			planInputs(0.06, 0.06, 4), 8 * 3600, true, "out of reach within 4 rounds"},
		{"a budget shorter than a round: nothing changes",
			planInputs(0.004, 0.03, 12), 60, false, "not one more round fits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scale, line := nextRequests(tc.in, tc.left)
			if got := scale > 1; got != tc.wantScale {
				t.Errorf("scale %d, want above 1: %v (%s)", scale, tc.wantScale, line)
			}
			if !tc.wantScale && scale != 0 {
				t.Errorf("scale %d, want 0 (the campaign's own requests)", scale)
			}
			if !strings.Contains(line, tc.wantLine) {
				t.Errorf("plan line %q, want it to contain %q", line, tc.wantLine)
			}
			if scale > maxPlannedFactor {
				t.Errorf("scale %d above the bound %d", scale, maxPlannedFactor)
			}
		})
	}
}

// TestLookNeverPromisesZero: a look whose open comparisons have no noise
// figure (launches that did not vary, as a deterministic simulator's) or
// hardly any never prints ±0.0%, with or without a budget; it says the MDE
// cannot be estimated, or bounds it.
func TestLookNeverPromisesZero(t *testing.T) {
	silent := planInputs(0, 0, 12)
	none := planInputs(0.004, 0.03, 12)
	none.Noise = nil
	tiny := planInputs(1e-6, 1e-6, 12)
	for _, tc := range []struct {
		name string
		in   plan.Inputs
		left float64
		want string
	}{
		{"no noise", silent, -1, "cannot be estimated"},
		{"no open comparison with a noise figure", none, -1, "cannot be estimated"},
		{"hardly any noise", tiny, -1, "under ±0.1%"},
		{"no noise, a budget", silent, 8 * 3600, "cannot be estimated"},
		{"hardly any noise, a budget", tiny, 8 * 3600, "under ±0.1%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, line := nextRequests(tc.in, tc.left)
			if strings.Contains(line, "±0.0%") || !strings.Contains(line, tc.want) {
				t.Errorf("plan line %q, want %q and never ±0.0%%", line, tc.want)
			}
		})
	}
}
