package measure

import (
	"cmp"
	"slices"
)

// Window is a time interval in Unix nanoseconds.
type Window struct{ Start, End int64 }

// Seconds is the window's length in seconds.
func (w Window) Seconds() float64 { return float64(w.End-w.Start) / 1e9 }

// SteadyWindow returns the level's steady-state window in Unix ns: from the
// moment the C-th request is in flight (or the first completion, if that
// comes sooner) to the moment the first slot goes idle with nothing left to
// send, which in a closed loop is the (N−C+1)-th completion. ok is false
// when no such window exists (fewer requests than slots).
func SteadyWindow(c int, recs []Record) (start, end int64, ok bool) {
	n := len(recs)
	if n == 0 || c < 1 || n < c {
		return 0, 0, false
	}
	sends := make([]int64, n)
	ends := make([]int64, n)
	for i, r := range recs {
		sends[i], ends[i] = r.SendNs, r.EndNs
	}
	slices.Sort(sends)
	slices.Sort(ends)
	start = min(sends[c-1], ends[0])
	end = ends[n-c]
	return start, end, end > start
}

// WallWindow is first send to last end; ok is false when it is empty.
func WallWindow(recs []Record) (w Window, ok bool) {
	if len(recs) == 0 {
		return Window{}, false
	}
	w = Window{recs[0].SendNs, recs[0].EndNs}
	for _, r := range recs {
		w.Start = min(w.Start, r.SendNs)
		w.End = max(w.End, r.EndNs)
	}
	return w, w.End > w.Start
}

// OKTokens is the completion tokens of the successful records.
func OKTokens(recs []Record) int {
	n := 0
	for _, r := range recs {
		if r.OK() {
			n += r.Tokens
		}
	}
	return n
}

// TokensIn returns the completion tokens of successful records produced
// within w (start inclusive, end exclusive).
func TokensIn(recs []Record, w Window) float64 {
	var tok float64
	for _, r := range recs {
		if r.OK() {
			tok += tokensIn(r, w)
		}
	}
	return tok
}

// tokensIn is the share of one record's tokens produced within w. The first
// token is counted at its first-chunk time and the rest are spread evenly
// from then to the end: an even spread is exact for a request decoded at a
// steady pace.
func tokensIn(r Record, w Window) float64 {
	if r.Tokens <= 0 {
		return 0
	}
	in := func(t int64) bool { return t >= w.Start && t < w.End }
	first := r.FirstNs
	if first == 0 {
		first = r.EndNs
	}
	var tok float64
	if in(first) {
		tok++
	}
	rest := float64(r.Tokens - 1)
	if rest <= 0 {
		return tok
	}
	if r.EndNs <= first {
		if in(first) {
			tok += rest
		}
		return tok
	}
	lo, hi := max(first, w.Start), min(r.EndNs, w.End)
	if hi > lo {
		tok += rest * float64(hi-lo) / float64(r.EndNs-first)
	}
	return tok
}

// InFlight returns the time-weighted mean number of records in flight
// (sent, not yet ended) over w.
func InFlight(recs []Record, w Window) float64 {
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

// Throughput is the throughput of one level repeat of one launch.
type Throughput struct {
	// Window is the steady-state window (SteadyWindow), or the wall window
	// when Steady is false.
	Window Window
	Steady bool
	// Tokens is the completion tokens produced inside Window; TokS is
	// Tokens over Window, tok/s: the level's one throughput figure.
	Tokens float64
	TokS   float64
	// Concurrency is the time-weighted mean of requests in flight over Window.
	Concurrency float64
	// Samples are within-launch throughput samples, tok/s, in time order;
	// SampleSeconds is the mean length of the interval one sample covers.
	// SamplesOK is false when the level is too short for within-launch
	// samples; the one sample is then over the wall time.
	Samples       []float64
	SampleSeconds float64
	SamplesOK     bool
}

// LevelThroughput measures one level repeat at concurrency c from its
// records (warm-up already left out): the steady-state throughput and at
// most maxSamples within-launch samples.
func LevelThroughput(recs []Record, c, maxSamples int) Throughput {
	var t Throughput
	start, end, ok := SteadyWindow(c, recs)
	if ok {
		t.Window, t.Steady = Window{start, end}, true
	} else {
		t.Window, _ = WallWindow(recs)
	}
	if sec := t.Window.Seconds(); sec > 0 {
		t.Tokens = TokensIn(recs, t.Window)
		t.TokS = t.Tokens / sec
		t.Concurrency = InFlight(recs, t.Window)
	}
	samples, w, sok := turnoverSamples(recs, c, maxSamples)
	t.Samples, t.SamplesOK = samples, sok
	if len(samples) > 0 {
		t.SampleSeconds = w.Seconds() / float64(len(samples))
	}
	return t
}

// turnoverSamples returns the throughput samples of one level repeat, tok/s,
// in time order, and the interval they cover.
//
// A closed loop at concurrency C turns its requests over C at a time. The
// samples cover the steady-state window (SteadyWindow): from the moment the
// C-th request is sent (every slot busy) to the (N−C+1)-th completion (the
// first slot that is not refilled); the drain tail after it is left out. The
// completions in that window are cut into groups of m consecutive
// completions, m a multiple of C (one turnover or more, so that requests that
// finish together are never split), at most maxSamples groups. A group's
// sample is its completed tokens over the time from the previous group's last
// completion (the window's start for the first) to its own last completion:
// departures over time, which in a closed loop with C in flight equals the
// decode rate over that interval.
//
// ok is false when the level has too few requests for one whole turnover
// (fewer than 2C−1); the single sample is then the tokens over the wall time.
func turnoverSamples(recs []Record, c, maxSamples int) (samples []float64, w Window, ok bool) {
	n := len(recs)
	if n == 0 {
		return nil, Window{}, false
	}
	c = max(c, 1)
	ends := slices.Clone(recs)
	slices.SortStableFunc(ends, func(a, b Record) int { return cmp.Compare(a.EndNs, b.EndNs) })
	sends := make([]int64, n)
	for i, r := range recs {
		sends[i] = r.SendNs
	}
	slices.Sort(sends)
	m := n - c + 1 // completions up to the last under full load
	if m < c {
		wall, _ := WallWindow(recs)
		if wall.End <= wall.Start {
			return nil, wall, false
		}
		return []float64{float64(OKTokens(recs)) / wall.Seconds()}, wall, false
	}
	group := c * ((m + c*maxSamples - 1) / (c * maxSamples))
	k := m / group
	start := min(sends[c-1], ends[0].EndNs)
	w = Window{start, ends[k*group-1].EndNs}
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
