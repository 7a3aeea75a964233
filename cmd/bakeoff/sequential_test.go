package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/loadgen"
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
			planInputs(0.004, 0.03, 12), -1, true, "to bring the MDE to ±"},
		{"no budget, out of reach: the campaign's requests are kept",
			planInputs(0.06, 0.06, 4), -1, false, "so the campaign's requests are kept"},
		{"a budget, out of reach: the most precise plan that fits",
			planInputs(0.06, 0.06, 4), 8 * 3600, true, "out of reach within 4 rounds"},
		{"a budget shorter than a round: nothing changes",
			planInputs(0.004, 0.03, 12), 60, false, "not one more round fits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scale, _, line := nextRequests(tc.in, tc.left, 1)
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
			_, _, line := nextRequests(tc.in, tc.left, 1)
			if strings.Contains(line, "±0.0%") || !strings.Contains(line, tc.want) {
				t.Errorf("plan line %q, want %q and never ±0.0%%", line, tc.want)
			}
		})
	}
}

// multiLevel is planInputs over three levels whose `auto` counts differ
// (30, 40 and 280 requests), the within-launch noise the same per request
// at each.
func multiLevel(launchSD, withinSD float64, maxRounds int) plan.Inputs {
	in := planInputs(launchSD, withinSD, maxRounds)
	in.Levels, in.Noise, in.Past = nil, nil, nil
	for j, c := range []int{1, 10, 70} {
		lv := measure.ConcurrencyLevel(c)
		auto := measure.RequestsAt(0, lv)
		in.Levels = append(in.Levels, plan.Level{Key: lv, PerRequest: 2 / float64(c), Min: auto, Max: auto * maxPlannedFactor})
		in.Noise = append(in.Noise, plan.Noise{Level: j, Launch: launchSD * launchSD, Within: withinSD * withinSD * 30})
	}
	for range 3 {
		in.Past = append(in.Past, in.At(0, 1).Requests)
	}
	in.Goal.Family = 3
	return in
}

// requestsRE reads a plan line's requests per level: "C=1 120, C=10 160".
var requestsRE = regexp.MustCompile(`C=(\d+) (\d+)`)

// TestNextRequestsSendWhatTheyPrint: the requests a look prints for each
// level are those the load generator then sends at the scale it takes
// (loadgen.Options.RequestsFor with the look's AutoScale), with a budget
// and without, whether the plan reaches the margin or not.
func TestNextRequestsSendWhatTheyPrint(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        plan.Inputs
		left      float64
		wantScale bool
	}{
		{"within-launch noise, no budget", multiLevel(0.004, 0.03, 12), -1, true},
		{"launch noise, no budget", multiLevel(0.02, 0.005, 12), -1, false},
		{"out of reach, no budget", multiLevel(0.06, 0.06, 4), -1, false},
		{"out of reach, a budget", multiLevel(0.06, 0.06, 4), 8 * 3600, true},
		{"within-launch noise, a budget", multiLevel(0.004, 0.03, 12), 3 * 3600, true},
		{"a budget shorter than a round", multiLevel(0.004, 0.03, 12), 60, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scale, p, line := nextRequests(tc.in, tc.left, 1)
			t.Log(line)
			if (scale > 1) != tc.wantScale {
				t.Errorf("scale %d, want above 1: %v (%s)", scale, tc.wantScale, line)
			}
			sends := loadgen.Options{AutoScale: scale}
			printed := requestsRE.FindAllStringSubmatch(line, -1)
			if tc.left >= 0 && strings.Contains(line, "not one more round fits") {
				if len(printed) != 0 {
					t.Errorf("no round fits, yet the line prints requests: %s", line)
				}
				return
			}
			if len(printed) != len(tc.in.Levels) {
				t.Fatalf("the line prints %d levels' requests, want %d: %s", len(printed), len(tc.in.Levels), line)
			}
			for j, m := range printed {
				c, _ := strconv.Atoi(m[1])
				n, _ := strconv.Atoi(m[2])
				if want := sends.RequestsFor(c); n != want || p.Requests[j] != want {
					t.Errorf("C=%d: printed %d, planned %d, the load generator sends %d at scale %d: %s", c, n, p.Requests[j], want, scale, line)
				}
			}
			if strings.Contains(line, "±0.0%") {
				t.Errorf("the line promises ±0.0%%: %s", line)
			}
		})
	}
}
