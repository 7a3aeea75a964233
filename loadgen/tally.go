package loadgen

import (
	"context"
	"fmt"
	"sync"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// tally collects one level's records as its requests finish. The closed and
// the open loop differ in when they send, not in what happens to a finished
// request, so both hand it to sweep.finish.
type tally struct {
	l        levelSpec
	start    int64 // Unix ns the level began, for the progress rate
	recs     []measure.Record
	tokens   int   // completion tokens of successful records so far
	lastProg int64 // Unix ns of the last progress event
	midOnce  sync.Once
}

func newTally(l levelSpec, start int64) *tally {
	return &tally{l: l, start: start, recs: make([]measure.Record, 0, l.n)}
}

// finish adds one finished request to t: it streams the record to
// Options.Records (stopping the sweep when that fails), sends a progress
// event at most every ProgressInterval and at the level's end, and halfway
// through starts the mid-level scrape, tracked by wg.
func (s *sweep) finish(ctx context.Context, stop context.CancelFunc, t *tally, rec measure.Record, wg *sync.WaitGroup) {
	l := t.l
	s.mu.Lock()
	t.recs = append(t.recs, rec)
	if rec.OK() {
		t.tokens += rec.Tokens
	}
	if s.o.Records != nil && s.stopErr == nil {
		if err := s.o.Records(rec); err != nil {
			s.stopErr = fmt.Errorf("writing records: %w", err)
			stop()
		}
	}
	done := len(t.recs)
	if now := nowNs(); s.o.Events != nil && (now-t.lastProg >= int64(ProgressInterval) || done == l.n) {
		t.lastProg = now
		tps := 0.0
		if el := float64(now-t.start) / 1e9; el > 0 {
			tps = float64(t.tokens) / el
		}
		e := Event{Kind: EventProgress, Level: l.level, Repeat: l.repeat, Done: done, Total: l.n, TokPerSec: tps}
		if l.warmup {
			e.Kind, e.Level = EventWarmup, measure.Level{}
		}
		s.event(e)
	}
	s.mu.Unlock()
	// Halfway through, the level is in its steady state (or, open loop, its
	// queue is growing): the moment for windowed server gauges.
	if l.probe != nil && done >= l.n/2 {
		t.midOnce.Do(func() {
			wg.Add(1)
			go func() { defer wg.Done(); l.probe.scrape(ctx, phaseMid) }()
		})
	}
}
