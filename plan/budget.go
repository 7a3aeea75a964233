package plan

import (
	"fmt"
	"math"
	"time"
)

// Forecast is what a budget of time buys.
type Forecast struct {
	// BudgetSeconds is the time given, s.
	BudgetSeconds float64
	// Plan is the most precise plan that fits the budget: its Rounds, its
	// Requests and the MDEPct expected at the end. Fits is false when not
	// even one more round at the fewest requests fits.
	Plan Plan
	Fits bool
	// Need is the quickest plan to the margin, as Next gives it, with the
	// rounds uncapped by the budget (still by the goal's maximum).
	Need Plan
	// Enough is whether the budget covers Need.
	Enough bool
	// Assumed is set when the figures are assumptions, not measurements
	// (before any round has run): String says so.
	Assumed bool
}

// Afford is the forecast for a budget of seconds from now: of every number
// of further rounds whose launches fit, the requests per level that spend
// the rest of the budget where they narrow the worst comparison most, and
// of those the plan with the smallest expected MDE.
func Afford(in Inputs, seconds float64) Forecast {
	g := in.Goal.withDefaults()
	past := in.pastVar()
	f := Forecast{BudgetSeconds: seconds, Need: Next(in)}
	f.Enough = f.Need.Reached && f.Need.Seconds <= seconds
	lo, _ := in.bounds()
	done := len(in.Past)
	best := math.Inf(1)
	for more := 1; done+more <= g.MaxRounds; more++ {
		if float64(more)*in.RoundSeconds(lo) > seconds {
			break
		}
		n, mde := in.mostPrecise(g, past, more, seconds)
		if mde < best {
			best = mde
			f.Plan, f.Fits = in.plan(g, past, more, n), true
			f.Plan.Reached = in.closes(g, past, more, n) >= half
		}
	}
	if !f.Fits {
		f.Plan = in.plan(g, past, 0, lo)
	}
	f.Plan = in.withStops(f.Plan)
	return f
}

// mostPrecise is the requests per level whose more rounds fit in seconds
// with the smallest worst MDE, found by bisection on the MDE: the cheapest
// requests for a target grow as the target shrinks.
func (in Inputs) mostPrecise(g Goal, past []float64, more int, seconds float64) ([]int, float64) {
	lo, _ := in.bounds()
	fits := func(n []int) bool { return float64(more)*in.RoundSeconds(n) <= seconds }
	best, hiT := lo, in.mde(g, past, more, lo)
	loT := 0.0
	for range 60 {
		mid := (loT + hiT) / 2
		n, ok := in.cheapest(g, past, more, mid)
		if ok && fits(n) {
			best, hiT = n, mid
		} else {
			loT = mid
		}
	}
	return best, in.mde(g, past, more, best)
}

// String is the forecast in one line: "with 8h expect ±3.1% after 7
// rounds, 4 more of C=1 120, C=2 120 requests (the auto count ×4); ±2%
// needs about 13h (20 rounds)". The requests are those of the further
// rounds.
func (f Forecast) String() string {
	s := ""
	if f.Assumed {
		s = " (assumed costs and noise: no round measured yet)"
	}
	budget := Duration(f.BudgetSeconds)
	if !f.Fits {
		return fmt.Sprintf("with %s not one more round fits (one takes about %s)%s", budget,
			Duration(f.Plan.RoundSeconds), s)
	}
	mde, ok := MDEFigure(f.Plan.MDEPct)
	if !ok {
		mde = "an MDE that cannot be estimated yet"
	}
	head := fmt.Sprintf("with %s expect %s after %d rounds, %s of %s", budget, mde, f.Plan.Rounds,
		plural(f.Plan.More, "more"), f.Plan.RequestsText())
	switch {
	case f.Enough:
		return fmt.Sprintf("%s: enough for ±%s%% (about %s)%s", head, fmtPct(f.Need.MarginPct), Duration(f.Need.Seconds), s)
	case f.Need.Reached:
		return fmt.Sprintf("%s; ±%s%% needs about %s (%d rounds)%s", head, fmtPct(f.Need.MarginPct), Duration(f.Need.Seconds), f.Need.Rounds, s)
	default:
		return fmt.Sprintf("%s; ±%s%% is out of reach within %d rounds%s", head, fmtPct(f.Need.MarginPct), f.Need.Rounds, s)
	}
}

func fmtPct(x float64) string { return fmt.Sprintf("%g", math.Round(x*10)/10) }

// RoundFits reports whether a round expected to take round ends before the
// deadline when started at now: a round that cannot finish is not started.
func RoundFits(now, deadline time.Time, round time.Duration) bool {
	return !now.Add(round).After(deadline)
}
