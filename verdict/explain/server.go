package explain

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

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
