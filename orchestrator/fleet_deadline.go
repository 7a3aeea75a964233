package orchestrator

import (
	"fmt"
	"slices"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// fits reports whether j can end before Options.Deadline, by its estimate;
// a round that cannot is reported (EventRoundOutOfTime, Outcome.OutOfTime)
// and not started.
func (o *orch) fits(j *roundJob) bool {
	if o.opt.Deadline.IsZero() {
		return true
	}
	n := o.toRun(j)
	if n == 0 {
		return true
	}
	per, basis := o.launchEstimate()
	est := time.Duration(n) * per
	now := o.now()
	if !now.Add(est).After(o.opt.Deadline) {
		return true
	}
	o.mu.Lock()
	o.outcome.OutOfTime = append(o.outcome.OutOfTime, j.round)
	o.mu.Unlock()
	o.emit(Event{Time: now, Kind: EventRoundOutOfTime, Round: j.round, Rounds: len(o.man.Order),
		Message: fmt.Sprintf("%s not started: %d launches × %s (%s) would end after %s, %s from now",
			o.roundName(j.round), n, per.Round(time.Second), basis, o.opt.Deadline.UTC().Format(time.RFC3339),
			o.opt.Deadline.Sub(now).Round(time.Second))})
	return false
}

// AssumedStreamTokS is the decode speed of one request stream the deadline
// estimate assumes before any launch of the run has been measured: the slow
// end of what serving engines reach per stream under load (a large model at
// high concurrency decodes some 20–40 tokens/s per request). Assuming slow
// errs on the side that costs little: a round left out for time is named
// with the resume command, while one started that cannot end loses its
// launches to the allocation's end.
const AssumedStreamTokS = 20.0

// launchEstimate is how long one launch is expected to take: the mean of
// the run's finished launches, or, before any has finished, the campaign's
// bound on a launch's waits (what `bakeoff validate` calls "waits at most")
// plus its sweep's expected length (sweepEstimate). The sweep must count:
// with minutes of load per level, a first round estimated from the waits
// alone starts in an allocation that ends long before its sweeps do.
func (o *orch) launchEstimate() (time.Duration, string) {
	o.mu.Lock()
	secs := slices.Clone(o.launchSecs)
	o.mu.Unlock()
	if len(secs) > 0 {
		sum := 0.0
		for _, s := range secs {
			sum += s
		}
		return time.Duration(sum / float64(len(secs)) * float64(time.Second)), fmt.Sprintf("the mean of %d finished launches", len(secs))
	}
	c := o.c
	d := c.Engine.HealthTimeout + 2*c.GPU.WaitTimeout + c.Engine.StopGrace + sweepEstimate(c.Sweep)
	return d, fmt.Sprintf("no launch finished yet: the campaign's bound on loading and GPU waits, and its sweep at %g tokens/s per request",
		AssumedStreamTokS)
}

// sweepEstimate is how long a sweep is expected to take before any has
// been measured: each request's tokens at AssumedStreamTokS, the warm-up's
// one after another; a closed-loop level sends its requests in waves of its
// concurrency, an open-loop level over its arrival schedule plus its last
// request's own length. Every level counts as many times as it is repeated.
func sweepEstimate(s campaign.Sweep) time.Duration {
	tokens, _ := s.OutputTokens()
	request := tokens / AssumedStreamTokS // seconds
	secs := float64(s.Warmup) * request
	for _, lv := range s.Levels() {
		n := s.RequestsAt(lv)
		level := 0.0
		if measure.IsRate(lv) {
			level = float64(n-1)/lv.Rate + request
		} else {
			c := max(lv.Concurrency, 1)
			level = float64((n+c-1)/c) * request
		}
		switch {
		case s.Sessions != nil && measure.IsRate(lv):
			// Sessions, not requests, arrive at the rate, and the last
			// one's users still think between its turns.
			level = s.SessionTime(lv).Seconds() + request
		case s.Sessions != nil:
			// Users who think are not sending: that time comes on top.
			level += s.SessionTime(lv).Seconds()
		}
		secs += level * float64(max(s.Repeats, 1))
	}
	return time.Duration(secs * float64(time.Second))
}

// roundName names results round k for people: "round 2", or with split
// rounds "round 2 (results round 7)", the replicate first since that is
// what the campaign's rounds count, and the part's round that the run's
// files are named by.
func (o *orch) roundName(k int) string {
	if r := o.man.Replicate(k); o.man.Split() && r != k {
		return fmt.Sprintf("round %d (results round %d)", r, k)
	}
	return fmt.Sprintf("round %d", k)
}
