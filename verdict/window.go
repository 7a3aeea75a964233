package verdict

import (
	"slices"

	"github.com/bakeoff-dev/bakeoff/loadgen"
)

// window is a time interval in Unix nanoseconds.
type window struct{ Start, End int64 }

func (w window) seconds() float64 { return float64(w.End-w.Start) / 1e9 }

// steadyWindow returns the steady-state window of one level repeat, as the
// load generator defines it (loadgen.SteadyWindow, docs/LOADGEN.md): from the
// moment every slot is busy to the moment the first slot goes idle with
// nothing left to send. ok is false when the level never reached a steady
// state (fewer requests than slots); the window is then the whole wall time,
// first send to last end.
func steadyWindow(recs []loadgen.Record, concurrency int) (w window, ok bool) {
	start, end, ok := loadgen.SteadyWindow(concurrency, recs)
	if ok {
		return window{start, end}, true
	}
	wall, _ := wallWindow(recs)
	return wall, false
}

// tokensIn returns the completion tokens of successful records generated
// within w. A record's first token is counted at its first-chunk time and the
// rest are spread evenly from then to its end: the records keep no per-token
// times, and an even spread is exact for a request decoded at a steady pace.
func tokensIn(recs []loadgen.Record, w window) float64 {
	var tok float64
	for _, r := range recs {
		if !r.OK() || r.Tokens <= 0 {
			continue
		}
		first := r.FirstNs
		if first == 0 {
			first = r.EndNs
		}
		if first >= w.Start && first < w.End {
			tok++
		}
		rest := float64(r.Tokens - 1)
		if rest <= 0 {
			continue
		}
		if r.EndNs <= first {
			if first >= w.Start && first < w.End {
				tok += rest
			}
			continue
		}
		lo, hi := max(first, w.Start), min(r.EndNs, w.End)
		if hi > lo {
			tok += rest * float64(hi-lo) / float64(r.EndNs-first)
		}
	}
	return tok
}

// inFlight returns the time-weighted mean number of records in flight
// (sent, not yet ended) over w.
func inFlight(recs []loadgen.Record, w window) float64 {
	if w.End <= w.Start {
		return 0
	}
	var busy float64
	for _, r := range recs {
		lo, hi := max(r.SendNs, w.Start), min(r.EndNs, w.End)
		if hi > lo {
			busy += float64(hi - lo)
		}
	}
	return busy / float64(w.End-w.Start)
}

// turnoverSamples returns the throughput samples of one level repeat, tok/s,
// in time order, and the interval they cover.
//
// A closed loop at concurrency C turns its requests over C at a time. The
// samples cover the load generator's steady-state window (loadgen.SteadyWindow):
// from the moment the C-th request is sent (every slot busy) to the
// (N−C+1)-th completion (the first slot that is not refilled); the drain
// tail after it is left out. The completions in that window are cut into
// groups of m consecutive completions, m a multiple of C (one turnover or
// more, so that requests that finish together are never split), at most
// maxSamples groups. A group's sample is its completed tokens over the time
// from the previous group's last completion (the window's start for the
// first) to its own last completion: departures over time, which in a closed
// loop with C in flight equals the decode rate over that interval.
//
// ok is false when the level has too few requests for one whole turnover
// (fewer than 2C−1); the single sample is then the tokens over the wall time.
func turnoverSamples(recs []loadgen.Record, c, maxSamples int) (samples []float64, w window, ok bool) {
	n := len(recs)
	if n == 0 {
		return nil, window{}, false
	}
	c = max(c, 1)
	ends := slices.Clone(recs)
	slices.SortStableFunc(ends, func(a, b loadgen.Record) int { return cmpInt64(a.EndNs, b.EndNs) })
	sends := make([]int64, n)
	for i, r := range recs {
		sends[i] = r.SendNs
	}
	slices.Sort(sends)
	m := n - c + 1 // completions up to the last under full load
	if m < c {
		wall, _ := wallWindow(recs)
		if wall.End <= wall.Start {
			return nil, wall, false
		}
		return []float64{float64(okTokens(recs)) / wall.seconds()}, wall, false
	}
	group := c * ((m + c*maxSamples - 1) / (c * maxSamples))
	k := m / group
	start := min(sends[c-1], ends[0].EndNs)
	w = window{start, ends[k*group-1].EndNs}
	prev := start
	for g := range k {
		tok := 0
		var end int64
		for i := g * group; i < (g+1)*group; i++ {
			if ends[i].OK() {
				tok += ends[i].Tokens
			}
			end = ends[i].EndNs
		}
		if end <= prev {
			continue // every completion of the group at one instant: no time to divide by
		}
		samples = append(samples, float64(tok)/(float64(end-prev)/1e9))
		prev = end
	}
	return samples, w, len(samples) > 0
}
