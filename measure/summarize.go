package measure

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Self-audit thresholds: a level is flagged as possibly client-limited when
// the client's own dispatch lag took a noticeable share of the throughput,
// or when the load never reached its target concurrency.
const (
	// ClientPaceShare is the PaceShare above which the client may have set
	// the pace: its lag between a freed slot and the next send cost the
	// level this share of its throughput or more. Half the default
	// equivalence margin (2%), so that pacing alone cannot carry a
	// difference across it unseen. It replaces a rule on the lag's p99
	// against the median latency, which at the sim's 40× (latencies of tens
	// of milliseconds, lags of a millisecond from the Go scheduler) flagged
	// nearly every level of the demo while taking well under 1% from any
	// (docs/METHOD.md, "When the load generator sets the pace").
	ClientPaceShare = 0.01
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
	s.DispatchLagP99, s.PaceShare = f.DispatchLagP99, f.PaceShare
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
	case s.OK > 0 && s.PaceShare > ClientPaceShare:
		s.ClientLimited = true
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"the client held freed slots empty %.1f%% of the time (dispatch lag p99 %.1f ms): the load generator may be the limit",
			100*s.PaceShare, s.DispatchLagP99*1e3))
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
	s := xs
	if !slices.IsSorted(s) {
		s = slices.Clone(xs)
		sort.Float64s(s)
	}
	return sortedPercentile(s, p)
}

// sortedPercentile is Percentile of s, which is sorted and not empty: the
// callers that read many percentiles of one set (DistOf, CDFOf) sort it
// once, where copying and sorting it at every percentile cost most of a
// verdict's time.
func sortedPercentile(s []float64, p float64) float64 {
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}
