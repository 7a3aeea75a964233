package plan

import (
	"math"

	"github.com/bakeoff-dev/bakeoff/measure"
	"strings"
	"testing"
	"time"
)

// oneLevel is a campaign of two scenarios at one level whose noise is
// split as given: launch seconds L, perRequest s per request.
func oneLevel(launchSD, withinSD float64, min int) Inputs {
	return Inputs{
		Levels:    []Level{{Key: measure.ConcurrencyLevel(1), PerRequest: 1, Min: min, Max: 100 * min}},
		Launch:    600,
		Scenarios: 2,
		Noise:     []Noise{{Level: 0, Launch: launchSD * launchSD, Within: withinSD * withinSD * float64(min)}},
		Goal:      Goal{MarginPct: 2, Family: 1, MaxRounds: 1000},
	}
}

// TestNextMatchesCochran: with room on both sides the integer search lands
// on the closed form's requests, within what whole rounds allow.
func TestNextMatchesCochran(t *testing.T) {
	for _, tc := range []struct {
		name             string
		launchSD, within float64
	}{
		{"within dominates", 0.005, 0.07},
		{"balanced", 0.01, 0.01},
		{"launch dominates", 0.02, 0.005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := oneLevel(tc.launchSD, tc.within, 30)
			in.Levels[0].Min, in.Goal.MarginPct = 1, 0.5 // many rounds: whole rounds matter little
			z := in.Noise[0]
			want := Cochran(in.Launch, in.Levels[0].PerRequest, z.Launch, z.Within)
			p := Next(in)
			if !p.Reached {
				t.Fatalf("not reached: %s", p)
			}
			if got := float64(p.Requests[0]); math.Abs(got-want)/want > 0.15 {
				t.Errorf("requests %v, Cochran's n* %.0f (%s)", got, want, p)
			}
		})
	}
}

// TestCochranLevels: the shared-rounds optimum gives every level the same
// within-launch variance, and with one level it is Cochran's.
func TestCochranLevels(t *testing.T) {
	n := CochranLevels(600, 1e-4, []float64{2, 0.5}, []float64{0.3, 1.2})
	if a, b := 0.3/n[0], 1.2/n[1]; math.Abs(a-b) > 1e-12 {
		t.Errorf("within parts %g and %g differ", a, b)
	}
	one := CochranLevels(600, 1e-4, []float64{2}, []float64{0.3})
	if want := Cochran(600, 2, 1e-4, 0.3); math.Abs(one[0]-want) > 1e-9 {
		t.Errorf("one level: %g, Cochran %g", one[0], want)
	}
}

// TestNextTradesLaunchesForRequests: where sampling within a launch
// dominates (the real llama-server A/A: ±7% round sd, mostly within) the
// planner raises the requests and needs fewer rounds; where the launches
// dominate it keeps the minimum and adds rounds.
func TestNextTradesLaunchesForRequests(t *testing.T) {
	within := Next(oneLevel(0.01, 0.069, 30))
	launch := Next(oneLevel(0.035, 0.005, 30))
	if !within.Reached || !launch.Reached {
		t.Fatalf("not reached:\n%s\n%s", within, launch)
	}
	if within.Requests[0] < 4*30 {
		t.Errorf("within-launch noise: requests %d, want at least 4× the minimum (%s)", within.Requests[0], within)
	}
	// Whole rounds round the optimum (n* = 19, under the minimum) up a little.
	if launch.Requests[0] > 2*30 || launch.Rounds <= 2*within.Rounds {
		t.Errorf("launch noise: %s; want requests within 2× the minimum 30 and more rounds than %d", launch, 2*within.Rounds)
	}
	fixed := oneLevel(0.01, 0.069, 30)
	fixed.Levels[0].Max = 30 // the fixed design: auto requests only
	f := Next(fixed)
	if f.Reached && f.Seconds <= within.Seconds {
		t.Errorf("the fixed design is as quick: %s against %s", f, within)
	}
	t.Logf("within dominates: %s", within)
	t.Logf("  fixed design:   %s", f)
	t.Logf("launch dominates: %s", launch)
}

// TestNextCountsPastRounds: rounds already run count toward the goal.
func TestNextCountsPastRounds(t *testing.T) {
	in := oneLevel(0.01, 0.02, 30)
	fresh := Next(in)
	in.Past = [][]int{{30}, {30}, {30}, {30}}
	later := Next(in)
	if later.Rounds < 4 || later.More >= fresh.More+0 && later.Rounds <= 4 {
		t.Errorf("with 4 rounds run: %s; fresh: %s", later, fresh)
	}
	if later.Seconds >= fresh.Seconds {
		t.Errorf("4 rounds already run saved nothing: %s against %s", later, fresh)
	}
}

// TestNextOutOfReach: a margin no plan within the bounds reaches gives the
// most precise plan at the most rounds, and says so.
func TestNextOutOfReach(t *testing.T) {
	in := oneLevel(0.05, 0.01, 30)
	in.Goal.MaxRounds = 4
	p := Next(in)
	if p.Reached || p.Rounds != 4 || p.Requests[0] != in.Levels[0].Max || p.MDEPct <= 2 {
		t.Errorf("plan %+v", p)
	}
	if !strings.Contains(p.String(), "out of reach within 4 rounds") {
		t.Errorf("String: %s", p)
	}
}

// TestAfford: a budget short of the need says what it buys and what the
// margin needs; a larger one is enough; more time never buys less.
func TestAfford(t *testing.T) {
	in := oneLevel(0.01, 0.069, 30)
	need := Next(in)
	short := Afford(in, need.Seconds/2)
	long := Afford(in, need.Seconds*1.2)
	if short.Enough || !long.Enough || short.Plan.MDEPct <= long.Plan.MDEPct || long.Plan.MDEPct > 2 {
		t.Errorf("short %+v\nlong %+v", short, long)
	}
	if s := short.String(); !strings.Contains(s, "±2% needs about "+Duration(need.Seconds)) || !strings.HasPrefix(s, "with "+Duration(need.Seconds/2)+" expect ±") {
		t.Errorf("short: %s", s)
	}
	if s := long.String(); !strings.Contains(s, "enough for ±2%") {
		t.Errorf("long: %s", s)
	}
	prev := math.Inf(1)
	for _, h := range []float64{1, 2, 4, 8, 16} {
		f := Afford(in, h*3600)
		if f.Fits && f.Plan.MDEPct > prev+1e-9 {
			t.Errorf("%gh buys ±%.2f%%, less than less time (±%.2f%%)", h, f.Plan.MDEPct, prev)
		}
		if f.Fits {
			prev = f.Plan.MDEPct
			if f.Plan.Seconds > h*3600 {
				t.Errorf("%gh: plan takes %s", h, Duration(f.Plan.Seconds))
			}
		}
	}
	if f := Afford(in, 60); f.Fits || !strings.Contains(f.String(), "not one more round fits") {
		t.Errorf("a minute: %s", f)
	}
}

func TestRoundFits(t *testing.T) {
	now := time.Date(2026, 3, 11, 5, 0, 0, 0, time.Local)
	deadline := time.Date(2026, 3, 11, 7, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		round time.Duration
		fits  bool
	}{{time.Hour, true}, {2 * time.Hour, true}, {2*time.Hour + time.Second, false}} {
		if got := RoundFits(now, deadline, tc.round); got != tc.fits {
			t.Errorf("a round of %s at 05:00 before 07:00: %v", tc.round, got)
		}
	}
}

func TestDuration(t *testing.T) {
	for sec, want := range map[float64]string{50: "50s", 45 * 60: "45m", 3*3600 + 9*60: "3h10m", 13 * 3600: "13h", math.Inf(1): "forever"} {
		if got := Duration(sec); got != want {
			t.Errorf("Duration(%g) = %s, want %s", sec, got, want)
		}
	}
}

// TestMDEFigure: a plan's MDE is a figure, a bound, or not estimable; never
// ±0.0% and never dozens of digits.
func TestMDEFigure(t *testing.T) {
	for _, tc := range []struct {
		pct  float64
		want string
		ok   bool
	}{
		{2.04, "±2.0%", true},
		{0.01, "under ±0.1%", true},
		{250, "over ±100%", true},
		{3.19e38, "over ±100%", true},
		{0, "", false},
		{math.Inf(1), "", false},
		{math.NaN(), "", false},
	} {
		if got, ok := MDEFigure(tc.pct); got != tc.want || ok != tc.ok {
			t.Errorf("MDEFigure(%g) = %q, %v; want %q, %v", tc.pct, got, ok, tc.want, tc.ok)
		}
	}
	for _, p := range []Plan{
		{Reached: true, More: 1, Rounds: 3, MDEPct: 0, MarginPct: 2},
		{Reached: false, More: 2, Rounds: 4, MDEPct: 0, MarginPct: 2},
		{Reached: true, More: 1, Rounds: 3, MDEPct: 0.001, MarginPct: 2},
	} {
		if s := p.String(); strings.Contains(s, "±0.0%") {
			t.Errorf("%+v: %s", p, s)
		}
		f := Forecast{BudgetSeconds: 3600, Fits: true, Plan: p, Need: p}
		if s := f.String(); strings.Contains(s, "±0.0%") {
			t.Errorf("forecast %+v: %s", p, s)
		}
	}
}
