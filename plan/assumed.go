package plan

import (
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// What the planner assumes before any round has run. Each is a stated
// guess, replaced by measurements after the first rounds; Forecast.String
// says when it still rests on them.
const (
	// AssumedLoad is how long a server takes from launch to ready: a
	// large model takes ten minutes or more to load (the seeds' did). The
	// campaign's health timeout bounds it.
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

// Assumed is the planner's inputs for a campaign before any round has
// run: the `auto` rule's counts as each level's minimum, the assumed
// costs and noise above, one comparison per variant and level, the rounds
// between goal's bounds (the campaign's rounds when goal names no
// maximum).
func Assumed(c *campaign.Campaign, goal Goal) Inputs {
	s := c.Sweep
	tokens := float64(s.MaxTokens)
	if mean, own := s.OutputTokens(); own {
		tokens = mean
	}
	perStream := tokens / AssumedStreamTokensPerSec
	load := min(AssumedLoad, c.Engine.HealthTimeout)
	in := Inputs{
		Launch:    (load + c.Engine.StopGrace).Seconds() + float64(s.Warmup)*perStream,
		Scenarios: len(c.Scenarios),
	}
	for _, lv := range s.Levels() {
		l := Level{Key: lv, Min: measure.RequestsAt(0, lv)}
		if measure.IsRate(lv) {
			// Arrivals set the pace: a request every 1/rate seconds.
			l.PerRequest = 1 / lv.Rate
		} else {
			l.PerRequest = perStream / float64(lv.Concurrency)
		}
		in.Levels = append(in.Levels, l)
	}
	for j, l := range in.Levels {
		for range max(len(c.Scenarios)-1, 0) {
			in.Noise = append(in.Noise, Noise{Level: j, Launch: AssumedLaunchSD * AssumedLaunchSD,
				Within: AssumedWithinSD * AssumedWithinSD * float64(l.Min)})
		}
	}
	if goal.MarginPct <= 0 {
		goal.MarginPct = c.EquivalenceMarginPct
	}
	if goal.Family <= 0 {
		n := len(c.Scenarios)
		goal.Family = n * (n - 1) / 2 * len(in.Levels)
	}
	if goal.MaxRounds <= 0 {
		goal.MaxRounds = max(c.Rounds, 1)
	}
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
