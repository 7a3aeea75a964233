package explain_test

import (
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/explain"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestLevelTimeline: a run whose launches have server timelines gives each
// level the timeline of its first round, its steady window inside the
// level and the running batch within the level's concurrency; a run without
// timelines gives none.
func TestLevelTimeline(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 5, 30}
	for _, tc := range []struct {
		name   string
		server bool
	}{{"with timelines", true}, {"without", false}} {
		t.Run(tc.name, func(t *testing.T) {
			per := make([][]measure.Record, 2)
			for _, l := range verdicttest.Campaign([]verdicttest.Engine{verdicttest.Eagle3TopK4}, s, 2, 7) {
				per[l.Round-1] = l.Records
			}
			m := verdicttest.Manifest("c", "20260101T000000Z", "sha256:aaaa", "e", s, "e")
			m.Rounds = 2
			run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
				{Name: "e", Rounds: per, Server: tc.server, Speculative: tc.server}})
			if err != nil {
				t.Fatal(err)
			}
			v, err := judge.Run(run, verdict.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range v.Scenarios[0].Levels {
				tl := l.Timeline
				if !tc.server {
					if tl != nil || l.Server != nil {
						t.Errorf("%s: a timeline without one in the run", measure.LevelName(l.Level))
					}
					continue
				}
				if tl == nil || tl.Round != 1 || len(tl.Series) != 3 || len(tl.Windows) != 1 {
					t.Fatalf("%s: timeline %+v", measure.LevelName(l.Level), tl)
				}
				if w := tl.Windows[0]; !(0 <= w.From && w.From < w.To && w.To <= tl.Seconds) {
					t.Errorf("%s: steady window %+v outside the level's %.1f s", measure.LevelName(l.Level), w, tl.Seconds)
				}
				run := tl.Series[0]
				if run.Name != verdict.TimelineRunning || len(run.T) < 10 || len(run.T) > explain.DefaultTimelinePoints+1 || len(run.T) != len(run.V) {
					t.Errorf("%s: running series %s with %d points", measure.LevelName(l.Level), run.Name, len(run.T))
				}
				for _, x := range run.V {
					if x < 0 || x > float64(l.Level.Concurrency) {
						t.Errorf("%s: %v running", measure.LevelName(l.Level), x)
						break
					}
				}
				if l.Server == nil || l.Server.Running == nil || l.Accept == nil {
					t.Errorf("%s: server %+v, accept %+v", measure.LevelName(l.Level), l.Server, l.Accept)
				}
			}
		})
	}
}
