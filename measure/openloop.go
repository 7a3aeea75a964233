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
	// SaturationShortfall is how far completions must fall below arrivals
	// over the last three quarters of the sending span, as a share of the
	// arrivals, for a level to be saturated: the completion rate is then
	// below 90% of the arrival rate.
	SaturationShortfall = 0.1
	// SaturationNoise is how many standard deviations of a stable queue's
	// in-flight count the backlog must grow by, when latency does not also
	// trend up, to be told from chance.
	SaturationNoise = 3
	// SaturationLatencyGrowth is the ratio of the median latency of the
	// last quarter of sends to that of the second quarter above which
	// latency is trending up.
	SaturationLatencyGrowth = 1.5
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
	// sending span.
	ArrivalRate, CompletionRate float64
	// InFlightMid and InFlightEnd are the requests in flight a quarter of
	// the way through the sending span and at its end.
	InFlightMid, InFlightEnd int
	// LatencyGrowth is the median latency of the last quarter of sends
	// over that of the second quarter.
	LatencyGrowth float64
	// Reason says, in a sentence, what was seen.
	Reason string
}

// SaturationOf judges an open-loop level from its records (warm-up left
// out). A server that keeps up completes requests as fast as they arrive,
// so its in-flight count wanders around a steady mean; one that cannot
// builds a queue that grows for as long as the level lasts. The level is
// saturated when, over the last three quarters of its sending span (the
// first quarter is its ramp-up), completions
// fall short of arrivals by more than SaturationShortfall of them, and the
// backlog's growth is more than chance: more than SaturationNoise standard
// deviations of a stable in-flight count (Poisson-like, variance about its
// mean, for two counts), or with latency trending up alongside
// (SaturationLatencyGrowth). Its figures then depend on how long the level
// ran, not on the server, and are not averaged with others.
func SaturationOf(recs []Record) Saturation {
	var s Saturation
	if len(recs) < MinSaturationRequests {
		s.Reason = fmt.Sprintf("%d requests are too few to judge saturation", len(recs))
		return s
	}
	s.Judged = true
	sends := make([]Record, len(recs))
	copy(sends, recs)
	slices.SortFunc(sends, func(a, b Record) int { return cmp.Compare(a.SendNs, b.SendNs) })
	first, last := sends[0].SendNs, sends[len(sends)-1].SendNs
	mid := first + (last-first)/4
	if last <= first {
		s.Reason = "every request was sent at once"
		return s
	}
	inFlight := func(t int64) int {
		n := 0
		for _, r := range recs {
			if r.SendNs <= t && (r.EndNs > t || r.EndNs == 0) {
				n++
			}
		}
		return n
	}
	var arrived, ended int
	for _, r := range recs {
		if r.SendNs > mid && r.SendNs <= last {
			arrived++
		}
		if r.EndNs > mid && r.EndNs <= last {
			ended++
		}
	}
	half := float64(last-mid) / 1e9 // the last three quarters
	s.ArrivalRate, s.CompletionRate = float64(arrived)/half, float64(ended)/half
	s.InFlightMid, s.InFlightEnd = inFlight(mid), inFlight(last)
	q := len(sends) / 4
	s.LatencyGrowth = medianLatency(sends[3*q:]) / math.Max(medianLatency(sends[q:2*q]), 1e-9)

	growth := float64(s.InFlightEnd - s.InFlightMid)
	short := growth > SaturationShortfall*float64(arrived)
	noise := SaturationNoise * math.Sqrt(2*math.Max(float64(s.InFlightMid), 1))
	switch {
	case short && growth > noise:
		s.Saturated = true
		s.Reason = fmt.Sprintf("saturated: requests in flight grew from %d to %d over the last three quarters of the level (completions %.3g/s against arrivals %.3g/s)",
			s.InFlightMid, s.InFlightEnd, s.CompletionRate, s.ArrivalRate)
	case short && s.LatencyGrowth >= SaturationLatencyGrowth:
		s.Saturated = true
		s.Reason = fmt.Sprintf("saturated: completions %.3g/s against arrivals %.3g/s, and the median latency grew %.1f× from the second to the last quarter",
			s.CompletionRate, s.ArrivalRate, s.LatencyGrowth)
	default:
		s.Reason = fmt.Sprintf("keeps up: completions %.3g/s against arrivals %.3g/s, %d then %d in flight",
			s.CompletionRate, s.ArrivalRate, s.InFlightMid, s.InFlightEnd)
	}
	return s
}

// medianLatency is the median end-to-end latency of recs in seconds, failed
// requests included: a queue delays them too.
func medianLatency(recs []Record) float64 {
	lat := make([]float64, 0, len(recs))
	for _, r := range recs {
		if r.EndNs > 0 {
			lat = append(lat, float64(r.EndNs-r.SendNs)/1e9)
		}
	}
	return Percentile(lat, 50)
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
	s.Rate = LevelRate(s.Level)
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
	if sat.Saturated {
		s.Saturated = true
		s.Saturation = sat.Reason
		s.Warnings = append(s.Warnings, sat.Reason+"; its throughput and latencies grow with the level's length and are not compared")
	}
}
