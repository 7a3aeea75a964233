package main

import (
	"context"
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/plan"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// The night's plan: what the CLI tells before a campaign starts, and the
// look a sequential campaign takes before each round past rounds.min (the
// verdict's sequential rule on the records so far, and the planner's
// requests for the rounds to come).

// budgetName names the campaign's time limit for people: "budget of 8h0m0s"
// or "deadline 07:00".
func budgetName(c *campaign.Campaign) string {
	if c.Deadline != nil {
		return fmt.Sprintf("deadline %02d:%02d", c.Deadline.Hour, c.Deadline.Minute)
	}
	return "budget of " + c.Budget.String()
}

// goalOf is the planner's goal for campaign c: its rounds and margin.
func goalOf(c *campaign.Campaign) plan.Goal {
	return plan.Goal{MarginPct: c.EquivalenceMarginPct, MinRounds: max(c.MinRounds, 2), MaxRounds: max(c.Rounds, 1)}
}

// planned reports whether the planner sets the requests per level: a
// sequential campaign whose sweep asks for `requests: auto`. A number the
// user wrote is kept.
func planned(c *campaign.Campaign) bool { return c.Sequential() && c.Sweep.Requests == 0 }

// planBefore is the plan line printed before the campaign starts (and by
// validate): with a budget or deadline, what it buys; without, what
// reaching the margin would take. Before any round has run its figures are
// assumptions, and it says so.
func planBefore(c *campaign.Campaign, now time.Time) string {
	if end, ok := c.End(now); ok {
		f := plan.AffordAssumed(c, goalOf(c), end.Sub(now).Seconds())
		return f.String()
	}
	p := plan.Next(plan.Assumed(c, goalOf(c)))
	return p.String() + " (assumed costs and noise, before any round has run)"
}

// lookFor is the look of a sequential campaign c: the variants whose
// comparisons the sequential rule has not all closed, why the others
// stopped, and, with requests: auto, the planner's requests per level for
// the next rounds.
//
// Without a budget the planner's requests are taken only when they reach
// the margin within rounds.max: when the margin is out of reach, the most
// precise plan is the most requests the bounds allow, and a night with no
// limit given would be spent on a difference it still cannot show. With a
// budget or deadline (ending at end), the requests are the most precise
// plan that fits the time left.
//
// Each look's open variants go to count, whose planned total the progress
// lines show.
func lookFor(c *campaign.Campaign, now func() time.Time, count *launchCounter) orchestrator.LookFunc {
	rule := &verdict.SequentialPlan{MinRounds: c.MinRounds, MaxRounds: c.Rounds}
	end, bounded := c.End(now())
	return func(_ context.Context, runDir string, rounds int) (orchestrator.Look, error) {
		run, err := results.ReadRun(runDir)
		if err != nil {
			return orchestrator.Look{}, fmt.Errorf("reading the run: %w", err)
		}
		left := -1.0
		if bounded {
			left = end.Sub(now()).Seconds()
		}
		look, err := lookAt(c, run, rule, rounds, left)
		if err == nil {
			count.looked(&run.Manifest, rounds+1, look.Open)
		}
		return look, err
	}
}

// lookAt is lookFor's look at run after rounds rounds, with left seconds
// before the budget or deadline (negative: none).
func lookAt(c *campaign.Campaign, run *results.Run, rule *verdict.SequentialPlan, rounds int, left float64) (orchestrator.Look, error) {
	v, err := verdict.Compute(run, verdict.Options{Sequential: rule})
	if err != nil {
		return orchestrator.Look{}, fmt.Errorf("the verdict after %d rounds: %w", rounds, err)
	}
	look := orchestrator.Look{Open: verdict.Open(v)}
	if v.Sequential != nil {
		for _, vs := range v.Sequential.Variants {
			if vs.Stopped {
				look.Stopped = append(look.Stopped, vs.Variant+": "+vs.Reason)
			}
		}
	}
	if len(look.Open) == 0 || !planned(c) {
		return look, nil
	}
	in := plan.Observed(v, run.Summary.Scenarios, pastRequests(run, v), levelBounds(c, v), openComparison, goalOf(c))
	in.Scenarios = len(look.Open) + 1
	look.Scale, look.Plan = nextRequests(in, left)
	return look, nil
}

// nextRequests is the requests scale of the next rounds (0: the campaign's
// own) and the plan line, for the time left in seconds (negative: no
// budget or deadline). Without a limit the planner's requests are taken
// only when they reach the margin; with one, the most precise plan that
// fits, unless not even one more round does.
func nextRequests(in plan.Inputs, left float64) (scale int, line string) {
	if left >= 0 {
		f := plan.Afford(in, left)
		if f.Fits {
			scale = autoScale(f.Plan)
		}
		return scale, f.String()
	}
	p := plan.Next(in)
	if !p.Reached {
		return 0, p.String() + "; the campaign's requests are kept (a budget or deadline lets the planner spend more)"
	}
	return autoScale(p), p.String()
}

// autoScale is the plan as one multiple of the `auto` count for every
// level, what the load generator takes: the largest of the levels' planned
// counts over their auto counts, rounded up, so no level gets fewer
// requests than planned. The auto rule already grows with the level, as
// the plan's counts mostly do.
func autoScale(p plan.Plan) int {
	k := 1
	for j, lv := range p.Levels {
		if auto := measure.RequestsAt(0, lv); auto > 0 && j < len(p.Requests) {
			k = max(k, (p.Requests[j]+auto-1)/auto)
		}
	}
	return min(k, maxPlannedFactor)
}

// openComparison is the planner's Open under the sequential rule: the
// comparisons it has not closed.
func openComparison(_ string, _ measure.Level, c verdict.Comparison) bool { return c.Open }

// levelBounds is each level's request bounds: at least the `auto` count
// (enough for a steady state), at most MaxPlannedFactor times it.
func levelBounds(c *campaign.Campaign, v *verdict.Verdict) map[measure.Level]plan.Level {
	out := map[measure.Level]plan.Level{}
	for _, lv := range v.Levels {
		lo := measure.RequestsAt(0, lv)
		out[lv] = plan.Level{Min: lo, Max: lo * maxPlannedFactor}
	}
	return out
}

// maxPlannedFactor bounds the planner's requests per level, as a multiple
// of the `auto` count: a level's sweep time grows with it, and a plan that
// asks for more than ten times the usual load is better met with rounds.
const maxPlannedFactor = 10

// pastRequests is the requests each level took in each round so far, by
// round then level (v.Levels order): the most any scenario's launch took
// there, since every scenario of a round takes the same.
func pastRequests(run *results.Run, v *verdict.Verdict) [][]int {
	rounds := 0
	for _, sr := range run.Summary.Scenarios {
		rounds = max(rounds, sr.RoundOf())
	}
	out := make([][]int, rounds)
	for k := range out {
		out[k] = make([]int, len(v.Levels))
	}
	for _, sr := range run.Summary.Scenarios {
		k := sr.RoundOf() - 1
		if sr.Status != results.StatusOK || k < 0 {
			continue
		}
		for _, l := range sr.Levels {
			for j, lv := range v.Levels {
				if l.Level == lv {
					out[k][j] = max(out[k][j], l.Requests)
				}
			}
		}
	}
	return out
}
