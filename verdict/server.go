package verdict

import (
	"fmt"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"math"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// CheckServer names the note comparing the server's generation throughput
// with the client's.
const CheckServer = "server"

// DefaultServerThroughputTolerance is how far the server's generation
// throughput over a steady window may stray from the client's before the
// verdict says so: the two count the same tokens over the same window, so a
// larger gap means one of them is not measuring what it claims (tokens the
// client never received, a counter that lags, a window that is not steady).
const DefaultServerThroughputTolerance = 0.05

// serverLevel is what the servers' own metrics said about level c, each
// figure the mean over the launches and repeats that have it (from the level
// summaries of levels.json, package timeline); nil when none has one. Each
// figure keeps the source of the first summary that has it.
func serverLevel(launches []records.Launch, c measure.Level) *measure.ServerSummary {
	var sums []*measure.ServerSummary
	for _, l := range launches {
		if l.Result == nil {
			continue
		}
		for _, ls := range l.Result.Levels {
			if ls.Level == c && ls.Server != nil {
				sums = append(sums, ls.Server)
			}
		}
	}
	if len(sums) == 0 {
		return nil
	}
	out := &measure.ServerSummary{}
	for _, s := range sums {
		out.Scrapes += s.Scrapes
	}
	out.Running = meanGauge(sums, func(s *measure.ServerSummary) *measure.GaugeStats { return s.Running })
	out.Queued = meanGauge(sums, func(s *measure.ServerSummary) *measure.GaugeStats { return s.Queued })
	out.KVUsage = meanGauge(sums, func(s *measure.ServerSummary) *measure.GaugeStats { return s.KVUsage })
	out.Preemptions = meanFigure(sums, func(s *measure.ServerSummary) *measure.ServerFigure { return s.Preemptions })
	out.PrefixHitRate = meanFigure(sums, func(s *measure.ServerSummary) *measure.ServerFigure { return s.PrefixHitRate })
	out.AcceptLength = meanFigure(sums, func(s *measure.ServerSummary) *measure.ServerFigure { return s.AcceptLength })
	out.GenTokS = meanFigure(sums, func(s *measure.ServerSummary) *measure.ServerFigure { return s.GenTokS })
	out.TTFT = meanHist(sums, func(s *measure.ServerSummary) *measure.HistogramQuantiles { return s.TTFT })
	out.ITL = meanHist(sums, func(s *measure.ServerSummary) *measure.HistogramQuantiles { return s.ITL })
	return out
}

func meanGauge(sums []*measure.ServerSummary, get func(*measure.ServerSummary) *measure.GaugeStats) *measure.GaugeStats {
	var out *measure.GaugeStats
	n := 0
	for _, s := range sums {
		g := get(s)
		if g == nil {
			continue
		}
		if out == nil {
			out = &measure.GaugeStats{Source: g.Source}
		}
		out.Mean += g.Mean
		out.P50 += g.P50
		out.Max += g.Max
		n++
	}
	if out != nil {
		out.Mean, out.P50, out.Max = out.Mean/float64(n), out.P50/float64(n), out.Max/float64(n)
		out.Source = fmt.Sprintf("%s, mean over %d launch-levels", out.Source, n)
	}
	return out
}

func meanFigure(sums []*measure.ServerSummary, get func(*measure.ServerSummary) *measure.ServerFigure) *measure.ServerFigure {
	var out *measure.ServerFigure
	n := 0
	for _, s := range sums {
		f := get(s)
		if f == nil {
			continue
		}
		if out == nil {
			out = &measure.ServerFigure{Source: f.Source}
		}
		out.Value += f.Value
		n++
	}
	if out != nil {
		out.Value /= float64(n)
		out.Source = fmt.Sprintf("%s, mean over %d launch-levels", out.Source, n)
	}
	return out
}

func meanHist(sums []*measure.ServerSummary, get func(*measure.ServerSummary) *measure.HistogramQuantiles) *measure.HistogramQuantiles {
	var out *measure.HistogramQuantiles
	n := 0
	for _, s := range sums {
		h := get(s)
		if h == nil {
			continue
		}
		if out == nil {
			out = &measure.HistogramQuantiles{Source: h.Source}
		}
		out.Count += h.Count
		out.P50 += h.P50
		out.P90 += h.P90
		out.P99 += h.P99
		n++
	}
	if out != nil {
		out.P50, out.P90, out.P99 = out.P50/float64(n), out.P90/float64(n), out.P99/float64(n)
		out.Source = fmt.Sprintf("%s, quantiles averaged over %d launch-levels", out.Source, n)
	}
	return out
}

// checkServer compares, per scenario and level, the server's generation
// throughput over the steady window with the client's over the same window
// (both from the level summaries, averaged over the same launches), and
// notes every level where they differ by more than
// DefaultServerThroughputTolerance.
func checkServer(v *Verdict, in records.Input) []Note {
	var notes []Note
	levels := 0
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			var server, client float64
			n := 0
			for _, ln := range in.Launches[s.Name] {
				if ln.Result == nil {
					continue
				}
				for _, ls := range ln.Result.Levels {
					if ls.Level == l.Level && ls.Server != nil && ls.Server.GenTokS != nil && ls.Throughput > 0 {
						server += ls.Server.GenTokS.Value
						client += ls.Throughput
						n++
					}
				}
			}
			if n == 0 {
				continue
			}
			levels++
			gap := server/client - 1
			if math.Abs(gap) <= DefaultServerThroughputTolerance {
				continue
			}
			notes = append(notes, Note{Severity: SeverityWarn, Check: CheckServer, Scenario: s.Name, Level: l.Level,
				Text: fmt.Sprintf("%s %s: the server generated %.1f tok/s over the steady window by its own counter, the client received %.1f tok/s (%+.1f%%, more than %.0f%% apart): one of the two is not counting what the other is; not decided: %s",
					s.Name, measure.LevelName(l.Level), server/float64(n), client/float64(n), 100*gap, 100*DefaultServerThroughputTolerance, DoubtAdvice(DoubtCounts))})
		}
	}
	if len(notes) == 0 && levels > 0 {
		notes = append(notes, Note{Severity: SeverityInfo, Check: CheckServer,
			Text: fmt.Sprintf("the servers' own generation throughput agrees with the client's within %.0f%% at all %d scenario-levels that report it",
				100*DefaultServerThroughputTolerance, levels)})
	}
	return notes
}
