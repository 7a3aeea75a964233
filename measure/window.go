package measure

import (
	"fmt"
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
// when no such window exists (fewer requests than slots). For an open-loop
// level it is OpenLoopWindow.
func SteadyWindow(level Level, recs []Record) (start, end int64, ok bool) {
	if IsRate(level) {
		return OpenLoopWindow(recs)
	}
	c := level.Concurrency
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
// token is counted at its first-chunk time and the rest are spread from then
// to the end along the record's arrival curve (ArrivalNs: the times at which
// each eighth of the content had arrived, linear in between), or evenly when
// the record has none, which is exact for a request decoded at a steady pace.
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
	if w.End <= first || w.Start >= r.EndNs {
		return tok
	}
	dur := r.EndNs - first
	return tok + rest*(arrived(r.ArrivalNs, dur, w.End-first)-arrived(r.ArrivalNs, dur, w.Start-first))
}

// arrived is the share of a stream's content that had arrived by t ns after
// its first content, for a stream of dur ns whose eighths arrived at marks
// (ArrivalNs); an even arrival when marks is not one per eighth.
func arrived(marks []int64, dur, t int64) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= dur:
		return 1
	case len(marks) != ArrivalFractions-1:
		return float64(t) / float64(dur)
	}
	// Points (0, 0), (marks[k-1], k/8), (dur, 1): find the segment holding t.
	x0, y0 := int64(0), 0.0
	for k := 1; k <= ArrivalFractions; k++ {
		x1 := dur
		if k < ArrivalFractions {
			x1 = min(max(marks[k-1], x0), dur)
		}
		y1 := float64(k) / ArrivalFractions
		if t <= x1 {
			if x1 == x0 {
				return y0
			}
			return y0 + (y1-y0)*float64(t-x0)/float64(x1-x0)
		}
		x0, y0 = x1, y1
	}
	return 1
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

// throughputWindow is the window a level repeat's throughput is measured
// over: the steady-state window (steady true), else the wall window.
func throughputWindow(level Level, recs []Record) (w Window, steady bool) {
	if start, end, ok := SteadyWindow(level, recs); ok {
		return Window{start, end}, true
	}
	w, _ = WallWindow(recs)
	return w, false
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
	// Samples are the within-launch throughput samples, tok/s, in time
	// order: the tokens produced inside each of len(Samples) equal
	// sub-windows of Window over its length, SampleSeconds. Their mean is
	// TokS.
	Samples       []float64
	SampleSeconds float64
	// SamplesOK is false when Window is shorter than one median request
	// latency (or there is no steady state): the one sample then spans
	// Window and Note says why.
	SamplesOK bool
	Note      string
}

// LevelThroughput measures one level repeat at concurrency c from its
// records (warm-up already left out): the steady-state throughput, and the
// within-launch samples.
//
// The samples cut the steady-state window into k equal sub-windows, each at
// least one median request latency long (so that a sample spans a whole
// request's life and requests finishing together are never what it
// measures), k at most maxSamples. Each sample counts the tokens produced
// inside its sub-window, every request's tokens spread over its stream by
// their arrival (TokensIn), not the tokens of the requests that finished in
// it: counting completions biases the first sample, and the mean, low
// whenever completion times disperse (speculative accept lengths, a running
// cap, variable lengths).
func LevelThroughput(recs []Record, level Level, maxSamples int) Throughput {
	var t Throughput
	t.Window, t.Steady = throughputWindow(level, recs)
	sec := t.Window.Seconds()
	if sec <= 0 {
		return t
	}
	t.Tokens = TokensIn(recs, t.Window)
	t.TokS = t.Tokens / sec
	t.Concurrency = InFlight(recs, t.Window)

	var lat []float64
	for _, r := range recs {
		if r.OK() {
			lat = append(lat, r.Latency().Seconds())
		}
	}
	med := Percentile(lat, 50)
	k := max(maxSamples, 1)
	if med > 0 {
		k = min(k, int(sec/med))
	}
	switch {
	case !t.Steady:
		t.Note = fmt.Sprintf("%d requests are too few for a steady state at %s; throughput is over the whole wall time",
			len(recs), LevelName(level))
	case k < 1:
		t.Note = fmt.Sprintf("the steady state (%.3g s) is shorter than one median request latency (%.3g s): one sample, not within-launch samples",
			sec, med)
	default:
		t.SamplesOK = true
	}
	k = max(k, 1)
	t.SampleSeconds = sec / float64(k)
	t.Samples = make([]float64, k)
	span := t.Window.End - t.Window.Start
	for i := range k {
		w := Window{t.Window.Start + span*int64(i)/int64(k), t.Window.Start + span*int64(i+1)/int64(k)}
		if w.End > w.Start {
			t.Samples[i] = TokensIn(recs, w) / w.Seconds()
		}
	}
	return t
}
