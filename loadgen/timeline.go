package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/timeline"
)

// DefaultScrapeInterval is how often the sweep reads the server's /metrics
// for its timeline when Options.ScrapeInterval is 0: guidellm's interval,
// fine enough for a steady window of tens of seconds, and a scrape a second
// costs a server nothing it would notice.
const DefaultScrapeInterval = time.Second

// timelineScraper reads /metrics at a fixed interval from the sweep's start
// to its end, keeps every scrape in memory for the level summaries and, with
// a metrics directory, writes them deduplicated to timeline.File there as it
// goes: the file is on the host with the records, so a dropped link to the
// orchestrator loses none of it.
type timelineScraper struct {
	s        *sweep
	interval time.Duration
	done     chan struct{}
	cancel   context.CancelFunc

	mu       sync.Mutex
	tl       timeline.Timeline
	file     *os.File
	w        *timeline.Writer
	warnings []string
	warned   map[string]bool
}

// startTimeline starts the scraper, or returns nil when the engine publishes
// no metrics the timeline reads.
func (s *sweep) startTimeline(ctx context.Context) *timelineScraper {
	if s.o.Engine.Server == nil {
		return nil
	}
	t := &timelineScraper{s: s, interval: s.o.ScrapeInterval, done: make(chan struct{}), warned: map[string]bool{}}
	if t.interval <= 0 {
		t.interval = DefaultScrapeInterval
	}
	if dir := s.o.MetricsDir; dir != "" {
		path := filepath.Join(dir, timeline.File)
		err := os.MkdirAll(dir, 0o700)
		if err == nil {
			t.file, err = os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		}
		if err != nil {
			t.warn(fmt.Sprintf("creating the server timeline %s: %v", path, err))
		} else {
			t.w = timeline.NewWriter(t.file)
		}
	}
	ctx, t.cancel = context.WithCancel(ctx)
	go t.loop(ctx)
	return t
}

func (t *timelineScraper) loop(ctx context.Context) {
	defer close(t.done)
	tick := time.NewTicker(t.interval)
	defer tick.Stop()
	for {
		t.scrape(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// scrape reads /metrics once. The scrape's time is halfway between asking
// and the answer, when the server read its values; a failed scrape is left
// out rather than recorded as empty.
func (t *timelineScraper) scrape(ctx context.Context) {
	probe := metricsProbe{client: t.s.probe, base: t.s.metricsBase, apiKey: t.s.o.APIKey}
	sent := nowNs()
	body, ok := probe.get(ctx, "/metrics")
	if !ok {
		return
	}
	at := sent + (nowNs()-sent)/2
	pts, err := timeline.Parse(bytes.NewReader(body))
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.warnLocked(fmt.Sprintf("server timeline: /metrics: %v", err))
	}
	if len(pts) == 0 {
		return
	}
	t.tl.Add(at, pts)
	if t.w != nil {
		if err := t.w.Write(at, pts); err != nil {
			t.warnLocked(err.Error())
		}
	}
}

func (t *timelineScraper) warn(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.warnLocked(msg)
}

// warnLocked keeps each distinct warning once; the sweep reports them when
// the scraper stops.
func (t *timelineScraper) warnLocked(msg string) {
	if !t.warned[msg] {
		t.warned[msg] = true
		t.warnings = append(t.warnings, msg)
	}
}

// summary is what the timeline says about a level over its throughput
// window (the steady state, else the wall time); nil without a timeline.
func (t *timelineScraper) summary(sum measure.LevelSummary) *measure.ServerSummary {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return timeline.Summarize(&t.tl, t.s.o.Engine.Server, sum.SteadyStartNs, sum.SteadyEndNs)
}

// stop ends the scraping, closes the file and reports the warnings.
func (t *timelineScraper) stop() {
	if t == nil {
		return
	}
	t.cancel()
	<-t.done
	if t.w != nil {
		if err := t.w.Close(); err != nil {
			t.warn(err.Error())
		}
		if err := t.file.Close(); err != nil {
			t.warn(fmt.Sprintf("closing the server timeline: %v", err))
		}
	}
	for _, w := range t.warnings {
		t.s.warn(w)
	}
}
