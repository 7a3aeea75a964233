package explain

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// TestServerLevel: a level's server summary is the launches' own, averaged,
// with its source kept.
func TestServerLevel(t *testing.T) {
	c4 := measure.ConcurrencyLevel(4)
	launch := func(gen, running float64) records.Launch {
		ls := measure.LevelSummary{Level: c4, Throughput: 100, Server: &measure.ServerSummary{Scrapes: 10,
			GenTokS: &measure.ServerFigure{Value: gen, Source: "rate(g) over the window"},
			Running: &measure.GaugeStats{Mean: running, P50: running, Max: running, Source: "r"}}}
		return records.Launch{Result: &results.ScenarioResult{Levels: []measure.LevelSummary{ls}}}
	}
	s := serverLevel([]records.Launch{launch(103, 3), launch(99, 5)}, c4)
	if s == nil || s.Running == nil || s.Running.Mean != 4 || s.GenTokS == nil || s.GenTokS.Value != 101 ||
		!strings.Contains(s.GenTokS.Source, "rate(g)") {
		t.Errorf("server level %+v", s)
	}
	if s := serverLevel(nil, c4); s != nil {
		t.Errorf("no launches: %+v, want nil", s)
	}
}
