package explain

import (
	"math"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// DefaultTimelinePoints is the most scrapes a level's timeline keeps per
// series in verdict.json: a panel a page wide shows no more, and a level of
// forty minutes scraped every second would otherwise put 2400 points per
// series into the file.
const DefaultTimelinePoints = 300

// serverMetrics are the metric names of a scenario's engine; a scenario whose
// engine the results do not name reads any known engine's.
func serverMetrics(engineName string) *engine.ServerMetrics {
	if p := engine.Lookup(engineName); p != nil && p.Server != nil {
		return p.Server
	}
	return engine.Lookup("generic").Server
}

// levelTimeline is level c's timeline from the first launch whose timeline
// has scrapes inside the level; nil when none has.
func levelTimeline(launches []records.Launch, c measure.Level, m *engine.ServerMetrics) *verdict.LevelTimeline {
	if m == nil {
		return nil
	}
	for _, l := range launches {
		if l.Timeline == nil {
			continue
		}
		var all []measure.Record
		for _, r := range l.Records {
			if r.Level == c {
				all = append(all, r)
			}
		}
		span, ok := measure.WallWindow(all)
		if !ok {
			continue
		}
		lt := &verdict.LevelTimeline{Round: l.Round, StartNs: span.Start, Seconds: span.Seconds()}
		sec := func(t int64) float64 { return float64(t-span.Start) / 1e9 }
		for _, g := range []struct {
			name  string
			names []string
			sum   bool
		}{
			{verdict.TimelineRunning, m.Running, true},
			{verdict.TimelineQueued, m.Queued, true},
			{verdict.TimelineKVUsage, m.KVUsage, false},
		} {
			metric, times, vals := l.Timeline.GaugeSeries(g.names, g.sum, span.Start, span.End)
			if metric == "" {
				continue
			}
			s := verdict.TimelineSeries{Name: g.name, Metric: metric}
			step := int(math.Ceil(float64(len(times)) / DefaultTimelinePoints))
			for k := range times {
				if k%step == 0 || k == len(times)-1 {
					s.T, s.V = append(s.T, sec(times[k])), append(s.V, vals[k])
				}
			}
			lt.Series = append(lt.Series, s)
		}
		if len(lt.Series) == 0 {
			continue
		}
		for _, reps := range launchRepeats(l, c) {
			if start, end, ok := measure.SteadyWindow(c, reps); ok {
				lt.Windows = append(lt.Windows, verdict.Span{From: sec(start), To: sec(end)})
			}
		}
		return lt
	}
	return nil
}
