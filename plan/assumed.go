package plan

import (
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// What the planner assumes where neither the campaign nor an earlier run
// says. Each is a stated guess, replaced by measurements after the first
// rounds; the plan line says which figures rest on them.
const (
	// AssumedLoadShare is the part of the campaign's health_timeout a
	// server is assumed to take to load: people set the timeout to a few
	// times the load they expect (the shipped configs: 30m for the seeds'
	// model, which took a little over ten minutes; 5m for GGUF files that
	// load in seconds to a minute).
	AssumedLoadShare = 1.0 / 3
	// AssumedLoad caps the assumed load: the seeds' 547 GB model took ten
	// minutes and more, and a timeout set far beyond that says little
	// about the load.
	AssumedLoad = 10 * time.Minute
	// AssumedStreamTokensPerSec is the output tokens per second of one
	// stream, at every concurrency: about the seeds' single-stream speed
	// (92.6 tok/s) halved, as streams slow under load.
	AssumedStreamTokensPerSec = 50.0
	// AssumedLaunchSD is the standard deviation of one round's log ratio
	// that comes from the launches: two launches at 1% each
	// (METHOD.md: the noise of a real host the honesty tests assume).
	AssumedLaunchSD = 0.014
	// AssumedWithinSD is the part that comes from sampling within the
	// launches at the `auto` request count: the rest of the 2% the
	// synthetic campaigns measure for one round's difference.
	AssumedWithinSD = 0.014
)

// Prior is what the planner takes for a campaign's costs and noise before
// the first round of a run: each figure and where it came from.
type Prior struct {
	// Load is the seconds a server takes from its launch to ready.
	Load float64
	// Overhead is the rest of a launch's fixed seconds: stopping the old
	// server, the GPU memory waits, the smoke request, the warm-up and
	// the scrapes around the levels, collecting, stopping.
	Overhead float64
	// PerRequest is the sweep seconds one measured request adds at each
	// level, s; a level it lacks takes AssumedStreamTokensPerSec.
	PerRequest map[measure.Level]float64
	// Source says where the costs came from, as the plan line names it:
	// "the run of 2026-12-01 in results/demo/20261201T104800Z", "the sim's
	// speed (40×) and the campaign".
	Source string
	// Assumed is set when Source is a guess rather than a measurement or
	// the engine's own model (AssumedPrior).
	Assumed bool
	// RoundVar is the variance of one round's paired log difference at
	// the `auto` count, log², as earlier runs on the host measured it (a
	// noise profile), and NoiseSource where it came from; 0 assumes
	// AssumedLaunchSD and AssumedWithinSD. Either way the variance is
	// split between launch and sampling as those two split it.
	RoundVar    float64
	NoiseSource string
}

// LaunchShare is the part of one round's variance the planner assumes
// comes from the launches before it has measured the split.
func LaunchShare() float64 {
	l, w := AssumedLaunchSD*AssumedLaunchSD, AssumedWithinSD*AssumedWithinSD
	return l / (l + w)
}

// AssumedPrior is the prior of campaign c from what it says alone: a load
// of AssumedLoadShare of its health timeout (at most AssumedLoad), the
// stop's grace period, the warm-up, and AssumedStreamTokensPerSec per
// stream, or the schedule where no server speeds the sweep up (an open
// loop's arrivals, a trace's span, sessions' think times).
func AssumedPrior(c *campaign.Campaign) Prior {
	s := c.Sweep
	perStream := meanTokens(s) / AssumedStreamTokensPerSec
	load := min(AssumedLoad, time.Duration(float64(c.Engine.HealthTimeout)*AssumedLoadShare))
	p := Prior{
		Load:       load.Seconds(),
		Overhead:   c.Engine.StopGrace.Seconds() + float64(s.Warmup)*perStream,
		PerRequest: map[measure.Level]float64{},
		Source: fmt.Sprintf("assumed: a load of about %s (a third of health_timeout %s, at most %s), %g tokens/s a stream",
			Duration(load.Seconds()), Duration(c.Engine.HealthTimeout.Seconds()), Duration(AssumedLoad.Seconds()),
			AssumedStreamTokensPerSec),
		Assumed: true,
	}
	for _, lv := range s.Levels() {
		p.PerRequest[lv] = AssumedPerRequest(s, lv)
	}
	return p
}

// AssumedPerRequest is the sweep seconds one request at level lv is
// assumed to add: AssumedStreamTokensPerSec shared by the level's
// streams, or the level's schedule per request where that is longer (an
// open loop's gap between arrivals, a trace's span at its speed, the
// think times of sessions).
func AssumedPerRequest(s campaign.Sweep, lv measure.Level) float64 {
	perStream := meanTokens(s) / AssumedStreamTokensPerSec
	n := float64(max(s.RequestsAt(lv), 1))
	var serve, schedule float64
	switch {
	case measure.IsSpeed(lv):
		schedule = s.TraceSpan.Seconds() / lv.Speed / n
		serve = perStream / n
	case measure.IsRate(lv):
		schedule = 1 / lv.Rate
	default:
		serve = perStream / float64(max(lv.Concurrency, 1))
	}
	if s.Sessions != nil {
		schedule = max(schedule, s.SessionTime(lv).Seconds()/n)
	}
	return max(serve, schedule)
}

// meanTokens is the output tokens a request of sweep s asks for, on
// average.
func meanTokens(s campaign.Sweep) float64 {
	if mean, own := s.OutputTokens(); own {
		return mean
	}
	return float64(s.MaxTokens)
}

// Assumed is Before on AssumedPrior: the planner's inputs for a campaign
// from what it says alone.
func Assumed(c *campaign.Campaign, goal Goal) Inputs {
	return Before(c, goal, AssumedPrior(c))
}

// Before is the planner's inputs for campaign c before any round has run,
// with the costs and noise of prior: each level's requests as the sweep
// gives them (the `auto` rule's counts, or the number written) as its
// minimum, one comparison per variant and level, not measured yet, the
// rounds between goal's bounds (the campaign's rounds when goal names no
// maximum).
func Before(c *campaign.Campaign, goal Goal, prior Prior) Inputs {
	s := c.Sweep
	in := Inputs{
		Launch:    prior.Load + prior.Overhead,
		Scenarios: len(c.Scenarios),
	}
	repeats := float64(max(s.Repeats, 1))
	for _, lv := range s.Levels() {
		per, ok := prior.PerRequest[lv]
		if !ok || per <= 0 {
			per = AssumedPerRequest(s, lv)
		}
		// A level run several times costs that many times its requests.
		in.Levels = append(in.Levels, Level{Key: lv, Min: max(s.RequestsAt(lv), 1), PerRequest: per * repeats})
	}
	launch, within := AssumedLaunchSD*AssumedLaunchSD, AssumedWithinSD*AssumedWithinSD
	if prior.RoundVar > 0 {
		launch, within = prior.RoundVar*LaunchShare(), prior.RoundVar*(1-LaunchShare())
	}
	for j, l := range in.Levels {
		for variant := range max(len(c.Scenarios)-1, 0) {
			in.Noise = append(in.Noise, Noise{Level: j, Variant: variant, Launch: launch, Within: within * float64(l.Min)})
		}
	}
	if goal.MarginPct <= 0 {
		goal.MarginPct = c.EquivalenceMarginPct
	}
	// The night waits on every comparison with the baseline; Holm divides
	// alpha among every pair of scenarios at every level.
	if goal.Family <= 0 {
		goal.Family = len(in.Noise)
	}
	if goal.Holm <= 0 {
		n := len(c.Scenarios)
		goal.Holm = n * (n - 1) / 2 * len(in.Levels)
	}
	if goal.MaxRounds <= 0 {
		goal.MaxRounds = max(c.Rounds, 1)
	}
	goal.Fixed = goal.Fixed || !c.Sequential()
	in.Goal = goal
	return in
}

// AffordAssumed is Afford on Assumed inputs, marked as resting on
// assumptions.
func AffordAssumed(c *campaign.Campaign, goal Goal, seconds float64) Forecast {
	f := Afford(Assumed(c, goal), seconds)
	f.Assumed = true
	return f
}
