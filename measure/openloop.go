package measure

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Open-loop self-audit and saturation thresholds (see docs/LOADGEN.md).
const (
	// ClientLateFloor is the p99 of how late requests were sent (seconds)
	// below which the client is never suspected of falling behind.
	ClientLateFloor = 0.010
	// ClientLateShare is that p99 as a share of the mean gap between
	// arrivals (1/rate) above which the client may have shaped the load.
	ClientLateShare = 0.1
	// MinArrivalShare is the measured arrival rate, as a share of the
	// schedule's, below which a level is flagged as client-limited.
	MinArrivalShare = 0.98

	// MinSaturationRequests is the fewest requests a level needs before
	// its saturation is judged.
	MinSaturationRequests = 20
	// SaturationShortfall is how far completions must fall below arrivals,
	// as a share of the arrivals, for a level to be saturated: the
	// completion rate is then below 90% of the arrival rate.
	SaturationShortfall = 0.1
	// SaturationTrend is the rank correlation between send time and
	// latency at and above which latency is trending up.
	SaturationTrend = 0.5
	// SaturationNoise is how many standard errors of a rank correlation
	// with no trend (1/√(n−1)) the trend must also exceed.
	SaturationNoise = 3
)

// OpenLoopWindow is the steady state of an open-loop level: from one median
// request latency after the first send (by then the requests in flight have
// reached their steady number, by Little's law) to the last send, after
// which the load only drains. ok is false when that leaves nothing.
func OpenLoopWindow(recs []Record) (start, end int64, ok bool) {
	if len(recs) < 2 {
		return 0, 0, false
	}
	first, last := recs[0].SendNs, recs[0].SendNs
	var lat []float64
	for _, r := range recs {
		first, last = min(first, r.SendNs), max(last, r.SendNs)
		if r.OK() {
			lat = append(lat, float64(r.EndNs-r.SendNs))
		}
	}
	start = first + int64(Percentile(lat, 50))
	return start, last, last > start
}

// Saturation is the verdict on whether an open-loop level outran the
// server, from its records alone.
type Saturation struct {
	// Judged is false when the level has too few requests to tell.
	Judged    bool
	Saturated bool
	// ArrivalRate and CompletionRate are requests sent and requests ended
	// (successful or not) per second over the last three quarters of the
	// sending span (the first quarter is its ramp-up).
	ArrivalRate, CompletionRate float64
	// InFlightEarly and InFlightLate are the time-weighted mean numbers of
	// requests in flight over the second and the last quarter of the
	// sending span.
	InFlightEarly, InFlightLate float64
	// LatencyTrend is the rank correlation (Spearman's) between when a
	// request was sent and its latency, over the requests sent after the
	// first quarter: near 0 for a server that keeps up, near 1 when each
	// request waits in a queue longer than the one before.
	LatencyTrend float64
	// Reason says, in a sentence, what was seen.
	Reason string
}

// SaturationOf judges an open-loop level from its records (warm-up left
// out). A server that keeps up completes requests as fast as they arrive,
// so the number in flight and the latency wander around steady values; one
// that cannot builds a queue that grows for as long as the level lasts, and
// every request waits longer than the one before. The level is saturated
// when both signs agree over its sending span after the first quarter (its
// ramp-up): completions fall short of arrivals by more than
// SaturationShortfall of them, and latency trends up with send time (rank
// correlation at least SaturationTrend, and more than SaturationNoise
// standard errors, 1/√(n−1), from none). A count of requests in flight at
// single instants is too noisy for this (a stable queue's swings by its
// square root from one moment to the next), and a ratio of early and late
// latencies misses a queue that was already long early on; the rank
// correlation sees the trend whatever its start. A level a few latencies
// long cannot show a trend and is judged as keeping up. A saturated level's figures depend on how long
// it ran, not on the server, and are never averaged with others.
//
// A level of multi-turn sessions is judged by its sessions instead of its
// requests (sessionSpans): what arrives on the schedule is a session, and
// the latency whose trend is judged is its first turn's, the wait of each
// arrival in the server's queue.
func SaturationOf(recs []Record) Saturation {
	var s Saturation
	unit, trendOf := "requests", recs
	if spans := sessionSpans(recs); spans != nil {
		recs, unit, trendOf = spans, "sessions", firstTurns(trendOf)
	}
	if len(recs) < MinSaturationRequests {
		s.Reason = fmt.Sprintf("%d %s are too few to judge saturation", len(recs), unit)
		return s
	}
	s.Judged = true
	sends := make([]Record, len(recs))
	copy(sends, recs)
	slices.SortFunc(sends, func(a, b Record) int { return cmp.Compare(a.SendNs, b.SendNs) })
	first, last := sends[0].SendNs, sends[len(sends)-1].SendNs
	if last <= first {
		s.Reason = "every request was sent at once"
		return s
	}
	at := func(k int64) int64 { return first + (last-first)*k/4 }
	var arrived, ended int
	for _, r := range recs {
		if r.SendNs > at(1) {
			arrived++
		}
		if r.EndNs > at(1) && r.EndNs <= last {
			ended++
		}
	}
	span := float64(last-at(1)) / 1e9
	s.ArrivalRate, s.CompletionRate = float64(arrived)/span, float64(ended)/span
	s.InFlightEarly = InFlight(recs, Window{at(1), at(2)})
	s.InFlightLate = InFlight(recs, Window{at(3), at(4)})
	var after []Record
	for _, r := range trendOf {
		if r.SendNs > at(1) && r.EndNs > 0 {
			after = append(after, r)
		}
	}
	slices.SortFunc(after, func(a, b Record) int { return cmp.Compare(a.SendNs, b.SendNs) })
	s.LatencyTrend = latencyTrend(after)

	short := float64(arrived-ended) > SaturationShortfall*float64(arrived)
	trend := len(after) > 1 && s.LatencyTrend >= SaturationTrend &&
		s.LatencyTrend > SaturationNoise/math.Sqrt(float64(len(after)-1))
	what := fmt.Sprintf("completions %.3g/s against arrivals %.3g/s; %s in flight %.1f, then %.1f; latency against send time: rank correlation %.2f",
		s.CompletionRate, s.ArrivalRate, unit, s.InFlightEarly, s.InFlightLate, s.LatencyTrend)
	if unit == "sessions" {
		what = "judged by sessions, " + what
	}
	if short && trend {
		s.Saturated = true
		s.Reason = "saturated: " + what
		return s
	}
	s.Reason = "keeps up: " + what
	return s
}

// latencyTrend is Spearman's rank correlation between send order and
// end-to-end latency of recs (in send order), failed requests included: a
// queue delays them too. Ties in latency take their mean rank.
func latencyTrend(recs []Record) float64 {
	n := len(recs)
	if n < 2 {
		return 0
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	lat := func(i int) int64 { return recs[i].EndNs - recs[i].SendNs }
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(lat(a), lat(b)) })
	rank := make([]float64, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && lat(idx[j+1]) == lat(idx[i]) {
			j++
		}
		for k := i; k <= j; k++ {
			rank[idx[k]] = float64(i+j) / 2
		}
		i = j + 1
	}
	// Pearson's correlation of the send order 0…n−1 with the ranks.
	mean := float64(n-1) / 2
	var sxy, sxx, syy float64
	for i := range n {
		dx, dy := float64(i)-mean, rank[i]-mean
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ArrivalRateOf is the rate at which recs were really sent: the requests
// after the first over the span of their send times, requests per second;
// 0 for fewer than two.
func ArrivalRateOf(recs []Record) float64 {
	if len(recs) < 2 {
		return 0
	}
	first, last := recs[0].SendNs, recs[0].SendNs
	for _, r := range recs {
		first, last = min(first, r.SendNs), max(last, r.SendNs)
	}
	if last <= first {
		return 0
	}
	return float64(len(recs)-1) / (float64(last-first) / 1e9)
}

// ScheduledRateOf is the rate the schedule asked for over the same span:
// the requests after the first over the span of their due times (send time
// less LateNs), requests per second.
func ScheduledRateOf(recs []Record) float64 {
	if len(recs) < 2 {
		return 0
	}
	due := func(r Record) int64 { return r.SendNs - r.LateNs }
	first, last := due(recs[0]), due(recs[0])
	for _, r := range recs {
		first, last = min(first, due(r)), max(last, due(r))
	}
	if last <= first {
		return 0
	}
	return float64(len(recs)-1) / (float64(last-first) / 1e9)
}

// summarizeOpenLoop adds an open-loop level's rate, lateness, cap and
// saturation to s, and its client and saturation warnings.
func summarizeOpenLoop(s *LevelSummary, rs []Record) {
	s.Rate = s.Level.Rate
	s.ArrivalRate = ArrivalRateOf(rs)
	var late []float64
	for _, r := range rs {
		late = append(late, float64(r.LateNs)/1e9)
		if r.Capped {
			s.Capped++
		}
	}
	s.LateP99 = Percentile(late, 99)
	sched := ScheduledRateOf(rs)
	switch {
	case s.Capped > 0:
		s.ClientLimited = true
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"%d requests waited for the client's in-flight cap: the load was not the rate asked for", s.Capped))
	case s.Rate > 0 && s.LateP99 > ClientLateFloor && s.LateP99 > ClientLateShare/s.Rate:
		s.ClientLimited = true
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"requests were sent up to %.1f ms late (p99): the load generator could not keep to the schedule", s.LateP99*1e3))
	case sched > 0 && s.ArrivalRate < MinArrivalShare*sched:
		s.ClientLimited = true
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"requests arrived at %.3g/s against %.3g/s scheduled: the load generator could not keep up", s.ArrivalRate, sched))
	}
	sat := SaturationOf(rs)
	if !sat.Judged {
		s.Warnings = append(s.Warnings, "saturation not judged: "+sat.Reason)
	}
	if sat.Saturated {
		s.Saturated = true
		s.Saturation = sat.Reason
		s.Warnings = append(s.Warnings, sat.Reason+"; its throughput and latencies grow with the level's length and are not compared")
	}
}
