package loadgen

import (
	"context"
	"sync"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// DefaultMaxInFlight is the open loop's safety cap on requests in flight
// when Options.MaxInFlight is 0. An open loop sends on schedule whatever is
// still running, so against a server that has stopped answering it would
// open connections without end; past the cap a request waits for one to
// finish, is recorded as Capped, and flags its level as client-limited. The
// cap is far above what any server in the seeds holds in flight (250), and
// within a default file-descriptor limit once Go has raised it.
const DefaultMaxInFlight = 4096

// levels are the sweep's levels in order: the concurrencies, or the rates.
func (o Options) levels() []measure.Level {
	if len(o.Speeds) > 0 {
		out := make([]measure.Level, len(o.Speeds))
		for i, v := range o.Speeds {
			out[i] = measure.SpeedLevel(v)
		}
		return out
	}
	if len(o.Rates) == 0 {
		out := make([]measure.Level, len(o.Concurrency))
		for i, c := range o.Concurrency {
			out[i] = measure.ConcurrencyLevel(c)
		}
		return out
	}
	out := make([]measure.Level, len(o.Rates))
	for i, r := range o.Rates {
		out[i] = measure.RateLevel(r)
	}
	return out
}

// requestsAt is the number of measured requests at level.
func (o Options) requestsAt(level measure.Level) int {
	if measure.IsSpeed(level) {
		return len(o.Trace.Rows) // every row, at every speed
	}
	return measure.RequestsAt(o.Requests, level) * o.autoScale()
}

// autoScale is the multiple of the `auto` count each level takes: AutoScale
// when the requests are auto, else 1 (a number given is taken as it is).
func (o Options) autoScale() int {
	if o.Requests > 0 {
		return 1
	}
	return max(o.AutoScale, 1)
}

// openLevel runs an open loop: request i is sent at its due time, start +
// l.due[i], however many are still in flight (up to the safety cap), and
// each is recorded with how late it went out. It returns the records in
// completion order.
func (s *sweep) openLevel(ctx context.Context, stop context.CancelFunc, l levelSpec) []measure.Record {
	var (
		wg    sync.WaitGroup
		slots = make(chan struct{}, s.o.MaxInFlight)
	)
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	start := nowNs()
	t := newTally(l, start)
	for seq := range l.n {
		due := start + int64(l.due[seq])
		capped, ok := arrive(ctx, timer, due, slots)
		if !ok {
			break
		}
		p := s.promptFor(seq)
		rec := measure.Record{Level: l.level, Rate: l.level.Rate, Repeat: l.repeat, Seq: seq, Prompt: p,
			PromptSet: s.o.Prompts.Hash, Category: s.o.Prompts.Prompts[p].Category,
			MaxTokens: s.o.Prompts.Prompts[p].MaxTokens, Capped: capped, Speed: l.level.Speed, InputTokens: s.exact[p]}
		wg.Add(1)
		go func() {
			defer wg.Done()
			firstSend := s.q.do(ctx, s.body(p, &rec), &rec)
			<-slots
			// Up to the first send, as for the closed loop's dispatch lag:
			// finding a connection the server had closed is not lateness.
			rec.LateNs = max(0, firstSend-due)

			s.finish(ctx, stop, t, rec, &wg)
		}()
	}
	wg.Wait()
	return t.recs
}

// arrive waits until the Unix-nanosecond time due, then takes a slot of the
// in-flight cap. capped reports that none was free when the arrival was due
// (the arrival then went out late, when one was); ok is false when ctx
// ended first. timer is the caller's, stopped and drained, reused across
// arrivals so the send loop allocates no timer per request.
func arrive(ctx context.Context, timer *time.Timer, due int64, slots chan struct{}) (capped, ok bool) {
	if wait := due - nowNs(); wait > 0 {
		timer.Reset(time.Duration(wait))
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
	}
	if ctx.Err() != nil {
		return false, false
	}
	select {
	case slots <- struct{}{}:
	default:
		capped = true
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
	}
	return capped, ctx.Err() == nil
}
