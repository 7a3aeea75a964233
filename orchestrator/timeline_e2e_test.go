package orchestrator_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/timeline"
)

// TestServerTimelineAgainstSim runs a campaign against a real `bakeoff sim`:
// the sweep's timeline comes home in the launch's metrics folder, and each
// level's server summary shows the running batch at the level's concurrency
// (in the median scrape) and a generation throughput within 5% of the
// client's.
func TestServerTimelineAgainstSim(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, concurrency: "[4, 16]", requests: 96, maxTokens: 96, speed: 20,
		sweepExtra: "  scrape_interval: 100ms\n"})
	dir := filepath.Join(w.root, "run")
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results[0]
	if r.Status != results.StatusOK {
		t.Fatalf("a: %s at %s: %s", r.Status, r.FailedPhase, r.Reason)
	}
	tl, size := launchTimeline(t, dir, "a")
	t.Logf("timeline: %d scrapes of %d series in %d bytes", len(tl.Times), len(tl.Series), size)
	for _, l := range r.Levels {
		s := l.Server
		if s == nil || s.Running == nil || s.GenTokS == nil {
			t.Fatalf("C=%d: server summary %+v, want running and throughput", l.Level.Concurrency, s)
		}
		c := float64(l.Level.Concurrency)
		t.Logf("C=%d: %d scrapes, running %.2f (p50 %.0f, max %.0f), queue %v, server %.1f tok/s, client %.1f tok/s",
			l.Level.Concurrency, s.Scrapes, s.Running.Mean, s.Running.P50, s.Running.Max, s.Queued, s.GenTokS.Value, l.Throughput)
		// The median scrape sees the level's whole batch running. The mean
		// also counts the scrapes that fall in the gap between a request's
		// end and the next one's arrival, which a client on busy cores is
		// slow to fill (3.3 of 4 under make test's load): it only has to
		// show most of the batch, and never more than all of it.
		if s.Running.P50 != c {
			t.Errorf("C=%d: the server's running batch had median %.0f", l.Level.Concurrency, s.Running.P50)
		}
		if s.Running.Mean < 0.5*c || s.Running.Max > c {
			t.Errorf("C=%d: the server's running batch averaged %.2f, at most %.0f", l.Level.Concurrency, s.Running.Mean, s.Running.Max)
		}
		if gap := s.GenTokS.Value/l.Throughput - 1; math.Abs(gap) > 0.05 {
			t.Errorf("C=%d: server %.1f tok/s, client %.1f tok/s: %+.1f%%", l.Level.Concurrency, s.GenTokS.Value, l.Throughput, 100*gap)
		}
	}
}

// launchTimeline reads the server timeline that scenario's only launch in
// the run at dir brought home, and its size in bytes.
func launchTimeline(t *testing.T, dir, scenario string) (*timeline.Timeline, int64) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, scenario, "*", results.MetricsDir, timeline.File))
	if len(files) != 1 {
		t.Fatalf("timeline files %v, want the launch's one", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tl, err := timeline.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return tl, st.Size()
}
