package verdict

import (
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"math"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// DefaultTimelinePoints is the most scrapes a level's timeline keeps per
// series in verdict.json: a panel a page wide shows no more, and a level of
// forty minutes scraped every second would otherwise put 2400 points per
// series into the file.
const DefaultTimelinePoints = 300

// Timeline series names (TimelineSeries.Name).
const (
	TimelineRunning = "running"
	TimelineQueued  = "queued"
	TimelineKVUsage = "kv_usage"
)

// LevelTimeline is what the server was doing through one level of one
// launch, from its /metrics timeline (docs/RESULTS.md, timeline.jsonl): the
// running batch, the queue and the KV cache's use over time, and the
// level's steady windows, which the summaries cover. One launch stands for
// the level (the first complete round with a timeline): the panel shows the
// shape of the level, and the summaries (Level.Server) average the launches.
type LevelTimeline struct {
	// Round is the launch's round.
	Round int `json:"round"`
	// StartNs is the level's first send in that launch, Unix ns; every
	// time below is seconds since it.
	StartNs int64 `json:"start_ns"`
	// Seconds is the level's length: to its last request's end.
	Seconds float64 `json:"seconds"`
	// Windows are each repeat's steady-state window.
	Windows []Span `json:"windows,omitempty"`
	// Series are the gauges the server published, in the order running,
	// queued, kv_usage; one the server has not is left out.
	Series []TimelineSeries `json:"series"`
}

// Span is an interval in seconds since a level's start.
type Span struct {
	From float64 `json:"from_s"`
	To   float64 `json:"to_s"`
}

// TimelineSeries is one gauge over a level: requests running or queued
// (summed over the server's series), or the KV cache's used fraction (0 to
// 1, averaged over them).
type TimelineSeries struct {
	Name string `json:"name"`
	// Metric is the server's metric it was read from.
	Metric string `json:"metric"`
	// T are the scrapes' times in seconds since the level's start, V the
	// values; at most DefaultTimelinePoints, evenly thinned.
	T []float64 `json:"t"`
	V []float64 `json:"v"`
}

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
func levelTimeline(launches []records.Launch, c measure.Level, m *engine.ServerMetrics) *LevelTimeline {
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
		lt := &LevelTimeline{Round: l.Round, StartNs: span.Start, Seconds: span.Seconds()}
		sec := func(t int64) float64 { return float64(t-span.Start) / 1e9 }
		for _, g := range []struct {
			name  string
			names []string
			sum   bool
		}{
			{TimelineRunning, m.Running, true},
			{TimelineQueued, m.Queued, true},
			{TimelineKVUsage, m.KVUsage, false},
		} {
			metric, times, vals := l.Timeline.GaugeSeries(g.names, g.sum, span.Start, span.End)
			if metric == "" {
				continue
			}
			s := TimelineSeries{Name: g.name, Metric: metric}
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
				lt.Windows = append(lt.Windows, Span{From: sec(start), To: sec(end)})
			}
		}
		return lt
	}
	return nil
}
