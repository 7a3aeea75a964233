package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/plan"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
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

// night is the plan of a campaign before its first round: the planner's
// inputs from the prior, and the rounds and requests expected, at the
// requests they send.
type night struct {
	campaign *campaign.Campaign
	prior    plan.Prior
	in       plan.Inputs
	// plan is the rounds expected: a fixed design's rounds, a sequential
	// campaign's plan, or what a budget or deadline buys (forecast). Its
	// Rounds and Seconds count the whole night, the pilot rounds of a
	// sequential campaign included.
	plan plan.Plan
	// forecast is what the budget or deadline buys; nil without one.
	forecast *plan.Forecast
	// kept is set when the planner's requests are not taken (the margin
	// is out of reach at any): plan is then at the campaign's requests.
	kept bool
	// sequential says the launches are at most plan.Rounds × scenarios.
	sequential bool
	// spread is how many launches run side by side on the campaign's
	// hosts, on average (spread): plan's Seconds are wall time.
	spread float64
}

// planNight is the night of campaign c started at now, whose earlier runs
// are under root. A sequential campaign's first rounds.min rounds run at
// the campaign's requests, since the looks that plan the rest come after
// them: they are the plan's pilot, and the planner plans the rest.
func planNight(c *campaign.Campaign, root string, now time.Time) night {
	prior := priorFor(c, root)
	in := plan.Before(c, goalOf(c), prior)
	top := 1
	if planned(c) {
		top = maxPlannedFactor
	}
	for j := range in.Levels {
		in.Levels[j].Max = in.Levels[j].Min * top
	}
	n := night{campaign: c, prior: prior, in: in, sequential: c.Sequential(), spread: spread(c)}
	var pilot float64
	if c.Sequential() {
		lo := in.At(0, 1).Requests
		for range c.MinRounds {
			n.in.Past = append(n.in.Past, lo)
		}
		pilot = float64(c.MinRounds) * in.RoundSeconds(lo)
	}
	switch end, ok := c.End(now); {
	case ok:
		f := afford(n.in, end.Sub(now).Seconds(), n.spread, pilot)
		n.forecast, n.plan = &f, f.Plan
	case !c.Sequential():
		n.plan = n.in.At(max(c.Rounds, 1), 1)
		n.plan.Seconds /= n.spread
	default:
		n.plan = plan.NextScaled(n.in)
		if !n.plan.Reached && n.plan.Scale > 1 {
			n.plan, n.kept = n.in.At(n.plan.More, 1), true
		}
		n.plan.Seconds = (n.plan.Seconds + pilot) / n.spread
	}
	return n
}

// afford is what seconds of wall time buy on hosts that run spread
// launches side by side (spread), pilot seconds of launches (one after
// another) already spent on rounds the planner does not choose: the
// forecast's figures in wall time, the pilot's included.
func afford(in plan.Inputs, seconds, spread, pilot float64) plan.Forecast {
	f := plan.AffordScaled(in, seconds*spread-pilot)
	f.BudgetSeconds = seconds
	f.Plan.Seconds = (f.Plan.Seconds + pilot) / spread
	f.Plan.RoundSeconds /= spread
	f.Need.Seconds = (f.Need.Seconds + pilot) / spread
	f.Enough = f.Need.Reached && f.Need.Seconds <= seconds
	return f
}

// String is the night in one line, for the start of a run: "plan: 7
// rounds × 4 scenarios = 28 launches at most, about 6m, to bring the MDE
// to ±3.8% (the margin ±4%) (a launch about 13s: …; costs from …; noise
// assumed: …)".
func (n night) String() string {
	return "plan: " + n.head() + " (" + n.costs() + "; " + n.noise() + ")"
}

// head is the rounds, launches, time and MDE expected, or what the budget
// buys.
func (n night) head() string {
	if f := n.forecast; f != nil {
		return f.String()
	}
	p := n.plan
	launches := p.Rounds * max(n.in.Scenarios, 1)
	at := ""
	if n.sequential {
		at = " at most"
	}
	s := fmt.Sprintf("%s × %s = %d launches%s, about %s", plural(p.Rounds, "round"), plural(n.in.Scenarios, "scenario"),
		launches, at, plan.Duration(p.Seconds))
	if n.spread > 1 {
		s += fmt.Sprintf(" on %s at once", placesWord(n.campaign, hostCount(n.campaign)))
	}
	mde, ok := plan.MDEFigure(p.MDEPct)
	switch {
	case n.in.Scenarios < 2:
		return s + "; a single scenario: nothing to compare"
	case !ok:
		return s + "; the MDE at the end cannot be estimated"
	case n.kept:
		return fmt.Sprintf("%s; ±%s%% is out of reach within %d rounds even at the auto count ×%d, so the campaign's requests are kept: MDE %s at the end",
			s, fmtPct(p.MarginPct), p.Rounds, maxPlannedFactor, mde)
	case !p.Reached:
		return fmt.Sprintf("%s; MDE %s at the end, short of the margin ±%s%%", s, mde, fmtPct(p.MarginPct))
	}
	return fmt.Sprintf("%s, to bring the MDE to %s (the margin ±%s%%)", s, mde, fmtPct(p.MarginPct))
}

// race is what a campaign that asks for the best configuration (question:
// select) spends before any round: the first stage every configuration
// runs, the most the race can run, and the rounds the guarantee needs on
// the noise the plan takes, against the race's own; "" for a comparison
// with the baseline, whose forecast head gives.
func (n night) race() string {
	c := n.campaign
	if c.Question != campaign.QuestionSelect {
		return ""
	}
	k := len(c.Scenarios)
	rounds := selection.RaceRounds(c.Rounds)
	first := min(cmp.Or(c.Select.FirstStage, selection.DefaultFirstStage(k)), rounds)
	delta := cmp.Or(c.Select.DeltaPct, c.EquivalenceMarginPct)
	pairVar := n.prior.RoundVar
	if pairVar <= 0 {
		pairVar = plan.AssumedLaunchSD*plan.AssumedLaunchSD + plan.AssumedWithinSD*plan.AssumedWithinSD
	}
	s := fmt.Sprintf("%d configurations: a first stage of %s (%d launches), then only those that can still win, to round %d at most (%d launches), and a confirmation round",
		k, plural(first, "round"), k*first, rounds, k*rounds)
	need := selection.GuaranteeRounds(k, first, c.Select.PCS, delta/100, pairVar)
	if need == 0 {
		return s
	}
	noise := fmt.Sprintf("%.1f%% a round", 100*math.Expm1(math.Sqrt(pairVar)))
	if need <= rounds {
		return fmt.Sprintf("%s; on noise of %s the guarantee at ±%s%% closes a level of near-tied configurations by about round %d (noisier launches tonight take longer)", s, noise, fmtPct(delta), need)
	}
	return fmt.Sprintf("%s; on noise of %s the guarantee at ±%s%% needs about %d rounds where configurations are near-tied, so such a level ends at round %d on its best mean, without the guarantee (a wider select.delta or more rounds keep it)",
		s, noise, fmtPct(delta), need, rounds)
}

// costs is one launch's expected time at the campaign's requests and
// where its figures came from.
func (n night) costs() string {
	lo := n.in.At(0, 1).Requests
	var requests float64
	for j, l := range n.in.Levels {
		requests += float64(lo[j]) * l.PerRequest
	}
	from := "costs from "
	if n.prior.Assumed {
		from = "costs "
	}
	return fmt.Sprintf("a launch about %s: load %s, requests %s, the rest %s; %s%s",
		plan.Duration(n.in.Launch+requests), plan.Duration(n.prior.Load), plan.Duration(requests),
		plan.Duration(n.prior.Overhead), from, n.prior.Source)
}

// noise is the noise the plan takes before any round of the run measured
// it: the host's noise profile, or assumed.
func (n night) noise() string {
	if n.prior.RoundVar > 0 {
		sd := math.Sqrt(n.prior.RoundVar)
		return fmt.Sprintf("noise from %s: %.1f%% a round, split as assumed (%.0f%% of its variance from the launches)",
			n.prior.NoiseSource, 100*math.Expm1(sd), 100*plan.LaunchShare())
	}
	sd := math.Hypot(plan.AssumedLaunchSD, plan.AssumedWithinSD)
	return fmt.Sprintf("noise assumed: %.1f%% a round (%.1f%% from the launches, %.1f%% from sampling at the auto count)",
		100*math.Expm1(sd), 100*math.Expm1(plan.AssumedLaunchSD), 100*math.Expm1(plan.AssumedWithinSD))
}

// lastPlan is the plan a look is compared with: the night's before the
// first look, the last look's after it.
type lastPlan struct {
	in   plan.Inputs
	plan plan.Plan
	// since names it for the look's line ("the plan before round 1");
	// noiseWas and costWas name where its noise and costs came from, as
	// the line compares with them ("assumed", "planned").
	since, noiseWas, costWas string
}

// lookFor is the look of a sequential campaign c: the variants whose
// comparisons the sequential rule has not all closed, why the others
// stopped, and, with requests: auto, the planner's requests per level for
// the next rounds, with what changed since the plan before it (the
// night's before, the last look's after the first look).
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
func lookFor(c *campaign.Campaign, now func() time.Time, count *launchCounter, before night) orchestrator.LookFunc {
	rule := &verdict.SequentialPlan{MinRounds: c.MinRounds, MaxRounds: c.Rounds}
	end, bounded := c.End(now())
	noiseWas := "assumed"
	if before.prior.RoundVar > 0 {
		noiseWas = "the host's profile"
	}
	last := &lastPlan{in: before.in, plan: before.plan, since: "the plan before round 1", noiseWas: noiseWas, costWas: "planned"}
	return func(_ context.Context, runDir string, rounds int) (orchestrator.Look, error) {
		run, err := results.ReadRun(runDir)
		if err != nil {
			return orchestrator.Look{}, fmt.Errorf("reading the run: %w", err)
		}
		left := -1.0
		if bounded {
			left = end.Sub(now()).Seconds()
		}
		look, err := lookAt(c, run, rule, rounds, left, last)
		if err == nil {
			count.looked(&run.Manifest, rounds+1, look.Open)
		}
		return look, err
	}
}

// lookAt is lookFor's look at run after rounds rounds, with left seconds
// before the budget or deadline (negative: none). The plan it takes says
// what changed since last (nil: nothing to compare with), which then
// becomes it.
func lookAt(c *campaign.Campaign, run *results.Run, rule *verdict.SequentialPlan, rounds int, left float64, last *lastPlan) (orchestrator.Look, error) {
	// The look acts on the rule's decisions alone, the same DecideRun the
	// report's verdict replays; the explanations and notes are the report's.
	recs, err := records.Read(run)
	if err != nil {
		return orchestrator.Look{}, fmt.Errorf("the verdict after %d rounds: %w", rounds, err)
	}
	v, err := verdict.DecideRun(recs, verdict.Options{Sequential: rule})
	if err != nil {
		return orchestrator.Look{}, fmt.Errorf("the verdict after %d rounds: %w", rounds, err)
	}
	if run.Manifest.Select != nil {
		return raceLook(v, run.Manifest.Select)
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
	// The plan is for the comparison that binds, in throughput or in a
	// metric the verdict decides beside it.
	in := plan.Observed(verdict.PlanningView(v), run.Summary.Scenarios, pastRequests(run, v), levelBounds(c, v), openComparison, goalOf(c))
	in.Scenarios = len(look.Open) + 1
	var p plan.Plan
	look.Scale, p, look.Plan = nextRequests(in, left, spread(c))
	if last != nil {
		look.Plan += "; since " + last.since + ": " + plan.Change(last.in, in, last.plan, p, last.noiseWas, last.costWas)
		*last = lastPlan{in: in, plan: p, since: "the last look", noiseWas: "at the last look", costWas: "at the last look"}
	}
	return look, nil
}

// nextRequests is the requests scale of the next rounds (0: the campaign's
// own), the plan they run and its line, for the time left in seconds
// (negative: no budget or deadline) on hosts that run spread launches side
// by side. The plan is made in multiples of the `auto` count, the one
// count the load generator takes, so that the requests it prints are those
// the rounds send. Without a limit the planner's requests are taken only
// when they reach the margin; with one, the most precise plan that fits,
// unless not even one more round does.
func nextRequests(in plan.Inputs, left, spread float64) (scale int, p plan.Plan, line string) {
	if left >= 0 {
		f := afford(in, left, spread, 0)
		if f.Fits && f.Plan.Scale > 1 {
			scale = f.Plan.Scale
		}
		return scale, f.Plan, f.String()
	}
	p = plan.NextScaled(in)
	p.Seconds /= spread
	if _, ok := plan.MDEFigure(p.MDEPct); !ok {
		return 0, p, p.String() + " (the campaign's requests, until a look measures the noise)"
	}
	if !p.Reached {
		top := p.Scale
		p = in.At(p.More, 1)
		p.Seconds /= spread
		p.Reached = false
		return 0, p, fmt.Sprintf("plan: ±%s%% is out of reach within %d rounds even at the auto count ×%d, so the campaign's requests are kept: %s (a budget or deadline lets the planner spend more)",
			fmtPct(p.MarginPct), p.Rounds, top, p.Body())
	}
	if p.Scale > 1 {
		scale = p.Scale
	}
	return scale, p, p.String()
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

// raceLook is the look of a selection campaign (question: select): the
// race replayed from the launches so far (judge.Selection) says which
// configurations can still win at a level not yet decided. Once the race
// is over, one confirmation round launches each level's selected and
// runner-up (and the best single configuration), whose figures the race
// never saw, so that the advantage reported is not the race's own,
// inflated by the selection; the campaign's last round is the last chance
// for it.
func raceLook(v *verdict.Verdict, info *results.SelectInfo) (orchestrator.Look, error) {
	res, leftOut, err := judge.Selection(v, info)
	if err != nil {
		return orchestrator.Look{}, fmt.Errorf("the race after %d rounds: %w", v.Rounds, err)
	}
	look := orchestrator.Look{Race: true}
	for _, name := range leftOut {
		look.Stopped = append(look.Stopped, name+": out of the race, a launch of its first stage having failed")
	}
	switch {
	case !res.Done:
		look.Open = res.Next
	case v.Rounds == res.Rounds && v.Rounds < judge.LastRound(v):
		look.Open = res.Confirm
		look.Plan = "the race is over after " + strconv.Itoa(res.Rounds) + " rounds: a confirmation round"
	}
	if v.Rounds == res.Rounds {
		// What this look ruled out: launched in the round it saw, and
		// launched no more.
		for _, name := range res.Looks[len(res.Looks)-1].Launched {
			if !slices.Contains(look.Open, name) {
				line := name + ": out of the race after round " + strconv.Itoa(res.Rounds)
				if why, _ := res.Why(name, res.Rounds); why != "" {
					line += ": " + why
				}
				look.Stopped = append(look.Stopped, line)
			}
		}
	}
	return look, nil
}
