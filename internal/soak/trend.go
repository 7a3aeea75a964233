package soak

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Series summarises one quantity of a sampled process over a run.
type Series struct {
	Start, End, Min, Max float64
	// Rise is how much the least-squares line through the second half of
	// the run rises across that half: a leak shows as a steady rise, while
	// the garbage collector's saw-tooth and a campaign's phases average out.
	Rise float64
	// Span is the length of the second half.
	Span time.Duration
}

// Summarize fits value over samples (in time order). The second half is by
// time, from the midpoint between the first and last sample.
func Summarize(samples []Sample, value func(Sample) float64) Series {
	var s Series
	if len(samples) == 0 {
		return s
	}
	s.Start, s.End = value(samples[0]), value(samples[len(samples)-1])
	s.Min, s.Max = math.Inf(1), math.Inf(-1)
	for _, x := range samples {
		v := value(x)
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	first, last := samples[0].At, samples[len(samples)-1].At
	mid := first + (last-first)/2
	var xs, ys []float64
	for _, x := range samples {
		if x.At >= mid {
			xs = append(xs, x.At.Seconds())
			ys = append(ys, value(x))
		}
	}
	s.Span = last - mid
	s.Rise = Slope(xs, ys) * s.Span.Seconds()
	return s
}

// Slope is the least-squares slope of ys against xs; 0 with fewer than two
// distinct xs.
func Slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 2 || len(xs) != len(ys) {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// gcLine matches a line of the Go runtime's GODEBUG=gctrace=1 output: the
// time since the program started and the heap before, at the end of and
// live after the collection ("gc 12 @3.456s 1%: … 4->5->2 MB, …").
var gcLine = regexp.MustCompile(`^gc \d+ @([0-9.]+)s .* (\d+)->(\d+)->(\d+) MB`)

// LiveHeap reads the heap left live after each garbage collection from a
// gctrace log, as samples whose RSSKiB holds it (in KiB, to the runtime's
// MB precision).
func LiveHeap(log string) []Sample {
	var out []Sample
	for _, line := range strings.Split(log, "\n") {
		m := gcLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		at, err1 := strconv.ParseFloat(m[1], 64)
		live, err2 := strconv.ParseInt(m[4], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, Sample{At: time.Duration(at * float64(time.Second)), RSSKiB: live * 1024})
	}
	return out
}
