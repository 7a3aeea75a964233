package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/timeline"
)

// roleTimelines reads every instance's /metrics while the sweep runs, each
// at the sweep's scrape interval through its own host, into
// roles/NAME/metrics/timeline.jsonl: the sweep's own timeline is the role
// it talks to (a router's), and a prefill worker's queue or a decode
// worker's running batch are the other roles'. The scrapes are timed by
// this machine's clock, the sweep's by its host's. An instance that serves
// no metrics leaves no file; a failed scrape is left out. Each timeline
// ends with a scrape taken when the sweep ends, so that it spans the whole
// sweep however short the sweep was against the interval.
type roleTimelines struct {
	done chan struct{}
	wg   sync.WaitGroup
}

// startRoleTimelines starts one scraper per instance with an HTTP face.
func (s *scenarioRun) startRoleTimelines(ctx context.Context) *roleTimelines {
	interval := s.o.c.Sweep.ScrapeInterval
	if interval <= 0 {
		interval = loadgen.DefaultScrapeInterval
	}
	rt := &roleTimelines{done: make(chan struct{})}
	for _, p := range s.dep.procs {
		if p.health == "" {
			continue
		}
		rt.wg.Add(1)
		go func() {
			defer rt.wg.Done()
			if err := s.scrapeRole(ctx, rt.done, p, interval); err != nil {
				s.warn(err.Error())
			}
		}()
	}
	return rt
}

// stop has each scraper take its last scrape and waits for their files to
// be written.
func (rt *roleTimelines) stop() {
	close(rt.done)
	rt.wg.Wait()
}

// scrapeRole scrapes one instance until done is closed (then once more) or
// ctx ends.
func (s *scenarioRun) scrapeRole(ctx context.Context, done <-chan struct{}, p *roleProc, interval time.Duration) error {
	path := filepath.Join(s.dir, rolesDir, p.name, results.MetricsDir, timeline.File)
	var (
		f *os.File
		w *timeline.Writer
	)
	defer func() {
		if w != nil {
			w.Close()
			f.Close()
		}
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := false
	for {
		sent := s.o.now()
		status, body, err := get(ctx, p.client, p.url+"/metrics", DefaultProbeTimeout)
		if err == nil && status == http.StatusOK {
			at := sent.Add(s.o.now().Sub(sent) / 2).UnixNano()
			if pts, _ := timeline.Parse(bytes.NewReader(body)); len(pts) > 0 {
				if w == nil {
					if err := os.MkdirAll(filepath.Dir(path), results.DirMode); err != nil {
						return fmt.Errorf("the timeline of role %s: %w", p.name, err)
					}
					if f, err = os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, results.ModeOf(path)); err != nil {
						return fmt.Errorf("the timeline of role %s: %w", p.name, err)
					}
					w = timeline.NewWriter(f)
				}
				if err := w.Write(at, pts); err != nil {
					return fmt.Errorf("the timeline of role %s: %w", p.name, err)
				}
			}
		}
		if last {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-done:
			last = true
		case <-tick.C:
		}
	}
}
