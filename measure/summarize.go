package measure

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Self-audit thresholds: a level is flagged as possibly client-limited when
// the client's own dispatch lag is large next to the requests it sends, or
// when the load never reached its target concurrency.
const (
	// ClientLagFloor is the dispatch lag p99 (seconds) below which the
	// client is never suspected: scheduler noise on a busy machine.
	ClientLagFloor = 0.001
	// ClientLagShare is the dispatch lag p99 as a share of the median
	// request latency above which the client may be setting the pace.
	ClientLagShare = 0.01
	// MinAchievedShare is the achieved concurrency, as a share of the
	// target, below which a level with a steady state is flagged.
	MinAchievedShare = 0.9
)

// Summarize is SummarizeAt the default percentiles.
func Summarize(level Level, repeat int, recs []Record) LevelSummary {
	return SummarizeAt(level, repeat, DefaultPercentiles, recs)
}

// SummarizeAt condenses the records of one level repeat, its latencies at
// the percentiles ps as well. It ignores warm-up records and records of
// other levels or repeats; it is a pure function of the records, so reports
// rebuild it from requests.jsonl.
func SummarizeAt(level Level, repeat int, ps []float64, recs []Record) LevelSummary {
	s := LevelSummary{Level: level, Repeat: repeat}
	var rs []Record
	for _, r := range recs {
		if !r.Warmup && r.Level == level && r.Repeat == repeat {
			rs = append(rs, r)
		}
	}
	s.Requests = len(rs)
	if len(rs) == 0 {
		return s
	}
	f := LevelFiguresAt(level, ps, rs)
	s.Counts = f.Counts
	wall, _ := WallWindow(rs)
	s.WallSeconds, s.WallThroughput = wall.Seconds(), f.WallThroughput
	s.PerRequestTokS = f.PerRequest.Mean
	s.LatencyMean, s.LatencyP50, s.LatencyP99 = f.Latency.Mean, f.Latency.P50, f.Latency.P99
	s.TTFTP50, s.TTFTP99 = f.TTFT.P50, f.TTFT.P99
	s.TPOTP50, s.TPOTP99 = f.TPOT.P50, f.TPOT.P99
	s.DispatchLagP99 = f.DispatchLagP99
	s.Percentiles = map[string]map[string]float64{}
	for name, d := range map[string]Dist{"latency": f.Latency, "ttft": f.TTFT, "tpot": f.TPOT, "itl": f.ITL} {
		if d.N > 0 {
			s.Percentiles[name] = d.Percentiles
		}
	}
	s.Throughput, s.AchievedConcurrency = f.SteadyThroughput, f.AchievedConcurrency
	w, steady := throughputWindow(level, rs)
	if !steady {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"no steady state: %d requests at %s; throughput is over the whole wall time", len(rs), LevelName(level)))
	}
	s.SteadyStartNs, s.SteadyEndNs = w.Start, w.End

	if s.TokensEstimated {
		s.Warnings = append(s.Warnings, "the server sent no usage: token counts are estimated")
	}
	if IsRate(level) {
		summarizeOpenLoop(&s, rs)
		return s
	}
	switch {
	case s.OK > 0 && s.DispatchLagP99 > ClientLagFloor && s.DispatchLagP99 > ClientLagShare*s.LatencyP50:
		s.ClientLimited = true
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"client dispatch lag p99 %.1f ms is large next to the latency: the load generator may be the limit",
			s.DispatchLagP99*1e3))
	case steady && len(rs) >= 2*level.Concurrency && s.AchievedConcurrency < MinAchievedShare*float64(level.Concurrency) && !thinking(rs):
		s.ClientLimited = true
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"achieved concurrency %.1f of %d: the load generator may be the limit", s.AchievedConcurrency, level.Concurrency))
	}
	return s
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Percentile is the p-th percentile (0–100) of xs by linear interpolation
// between closest ranks (numpy's default), zero for no values. xs is not
// modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}
