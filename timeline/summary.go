package timeline

import (
	"fmt"
	"math"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// MinScrapes is the fewest scrapes inside a window that Summarize summarises:
// a counter's increase needs two samples.
const MinScrapes = 2

// Summarize is what the server's metrics m say about the window (start,
// end], Unix ns: gauges as the mean, median and largest of their scraped
// values, counters as their increase with Prometheus' semantics (Increase),
// but for the generated tokens, read at the window's edges (EdgeIncrease),
// histograms as quantiles of their buckets' increases. A metric with several
// series (labels per engine core or rank) is summed over them, except the
// gauges that are fractions (KV usage, hit rate, accept length), which are
// averaged. nil when m is nil or fewer than MinScrapes scrapes fall inside the
// window.
func Summarize(tl *Timeline, m *engine.ServerMetrics, start, end int64) *measure.ServerSummary {
	if tl == nil || m == nil || end <= start {
		return nil
	}
	var in []int // scrape indexes inside the window
	for k, t := range tl.Times {
		if t > start && t <= end {
			in = append(in, k)
		}
	}
	if len(in) < MinScrapes {
		return nil
	}
	s := &measure.ServerSummary{Scrapes: len(in)}
	s.Running = tl.gauge(m.Running, in, true)
	s.Queued = tl.gauge(m.Queued, in, true)
	s.KVUsage = tl.gauge(m.KVUsage, in, false)
	if name, v, ok := tl.increase(m.Preemptions, start, end); ok {
		s.Preemptions = &measure.ServerFigure{Value: v, Source: "increase(" + name + ") over the window"}
	}
	s.PrefixHitRate = tl.ratio(m.PrefixHits, start, end)
	if s.PrefixHitRate == nil {
		if g := tl.gauge(m.PrefixHitRate, in, false); g != nil {
			s.PrefixHitRate = &measure.ServerFigure{Value: g.Mean, Source: "mean of " + g.Source}
		}
	}
	s.AcceptLength = tl.ratio(m.Accept, start, end)
	if s.AcceptLength == nil {
		if g := tl.gauge(m.AcceptGauge, in, false); g != nil {
			s.AcceptLength = &measure.ServerFigure{Value: g.Mean, Source: "mean of " + g.Source}
		}
	}
	// The generation throughput is set beside the client's tokens over the
	// same window (the verdict's counts doubt), so the counter is read at
	// the window's edges rather than extrapolated to them (EdgeIncrease).
	if name, v, ok := tl.edgeIncrease(m.GenerationTokens, start, end); ok {
		s.GenTokS = &measure.ServerFigure{Value: v / (float64(end-start) / 1e9),
			Source:    "increase(" + name + ") over the window, read at its edges from the scrapes around them (EdgeIncrease), over its length",
			Unchecked: m.GenerationUnchecked}
	}
	s.TTFT = tl.histogram(m.TTFT, start, end)
	s.ITL = tl.histogram(m.ITL, start, end)
	return s
}

// gauge summarises the first of names that has a value inside the window:
// at each scrape its series summed (sum) or averaged, then the mean, median
// and largest over the scrapes.
func (tl *Timeline) gauge(names []string, in []int, sum bool) *measure.GaugeStats {
	for _, name := range names {
		idx := tl.named(name)
		var vals []float64
		for _, k := range in {
			var tot float64
			n := 0
			for _, i := range idx {
				if v := tl.Values[i][k]; !math.IsNaN(v) {
					tot += v
					n++
				}
			}
			switch {
			case n == 0:
				continue
			case sum:
				vals = append(vals, tot)
			default:
				vals = append(vals, tot/float64(n))
			}
		}
		if len(vals) == 0 {
			continue
		}
		var mean, hi float64
		hi = math.Inf(-1)
		for _, v := range vals {
			mean += v
			hi = max(hi, v)
		}
		how := "averaged"
		if sum {
			how = "summed"
		}
		return &measure.GaugeStats{Mean: mean / float64(len(vals)), P50: measure.Percentile(vals, 50), Max: hi,
			Source: fmt.Sprintf("%s (gauge, %s over %d series; %d scrapes)", name, how, len(idx), len(vals))}
	}
	return nil
}

// increase is the first of names that has an increase over the window,
// summed over its series (Prometheus' sum(increase(x[w]))).
func (tl *Timeline) increase(names []string, start, end int64) (string, float64, bool) {
	return tl.summed(names, start, end, Increase)
}

// edgeIncrease is increase with each series read at the window's edges
// (EdgeIncrease).
func (tl *Timeline) edgeIncrease(names []string, start, end int64) (string, float64, bool) {
	return tl.summed(names, start, end, EdgeIncrease)
}

// summed is the first of names whose series have an increase by inc over
// the window, summed over them.
func (tl *Timeline) summed(names []string, start, end int64, inc func([]int64, []float64, int64, int64) (float64, bool)) (string, float64, bool) {
	for _, name := range names {
		var tot float64
		found := false
		for _, i := range tl.named(name) {
			if v, ok := inc(tl.Times, tl.Values[i], start, end); ok {
				tot += v
				found = true
			}
		}
		if found {
			return name, tot, true
		}
	}
	return "", 0, false
}

// ratio is the first pair whose denominator increased over the window:
// Offset + increase(Num) / increase(Den).
func (tl *Timeline) ratio(pairs []engine.CounterRatio, start, end int64) *measure.ServerFigure {
	for _, p := range pairs {
		_, num, okN := tl.increase([]string{p.Num}, start, end)
		_, den, okD := tl.increase([]string{p.Den}, start, end)
		if !okN || !okD || den <= 0 {
			continue
		}
		src := fmt.Sprintf("increase(%s) / increase(%s) over the window", p.Num, p.Den)
		if p.Offset != 0 {
			src = strconv.FormatFloat(p.Offset, 'g', -1, 64) + " + " + src
		}
		return &measure.ServerFigure{Value: p.Offset + num/den, Source: src}
	}
	return nil
}

// histogram is the window's quantiles of the first of names with
// observations in it: each bucket's increase (summed over the series that
// share its bound), then histogram_quantile.
func (tl *Timeline) histogram(names []string, start, end int64) *measure.HistogramQuantiles {
	for _, name := range names {
		byLe := map[float64]float64{}
		for _, i := range tl.named(name + "_bucket") {
			le, err := strconv.ParseFloat(tl.Series[i].Labels["le"], 64)
			if err != nil {
				continue
			}
			if v, ok := rawIncrease(tl.Times, tl.Values[i], start, end); ok {
				byLe[le] += v
			}
		}
		var bs []bucket
		for le, c := range byLe {
			bs = append(bs, bucket{le, c})
		}
		q50 := bucketQuantile(0.5, bs)
		if math.IsNaN(q50) {
			continue
		}
		return &measure.HistogramQuantiles{Count: byLe[math.Inf(1)], P50: q50, P90: bucketQuantile(0.9, bs),
			P99: bucketQuantile(0.99, bs), Source: "histogram_quantile over the increase of " + name + "_bucket in the window"}
	}
	return nil
}
