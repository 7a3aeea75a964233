package timeline

import "math"

// Increase is Prometheus' increase() of one counter series over the window
// (start, end], Unix ns, from its samples at times: what `increase(x[w])`
// evaluated at end returns when w = end − start. ok is false with fewer than
// two samples in the window, as Prometheus returns nothing then.
//
// As Prometheus does (promql/functions.go, extrapolatedRate): the range is
// left-open (Prometheus 3); the raw increase from the first to the last
// sample adds back the value before each reset (a sample lower than the one
// before it); it is then extrapolated to the window's edges, all the way when
// the first (last) sample lies within 1.1 average sample intervals of the
// edge, else by half an interval (the series is taken to start or end there);
// and a counter is never extrapolated below zero: the start is moved no
// earlier than where the line through the samples reaches zero. NaN samples
// (a scrape that did not carry the series) are skipped.
func Increase(times []int64, vals []float64, start, end int64) (float64, bool) {
	var (
		first, last   int64
		firstV, lastV float64
		raw           float64
		n             int
	)
	for k, t := range times {
		if t <= start || t > end || math.IsNaN(vals[k]) {
			continue
		}
		v := vals[k]
		if n == 0 {
			first, firstV = t, v
		} else {
			if v < lastV {
				raw += lastV // a reset: the counter restarted from zero
			}
			raw += v - lastV
		}
		last, lastV = t, v
		n++
	}
	if n < 2 {
		return 0, false
	}
	sampled := float64(last-first) / 1e9
	toStart := float64(first-start) / 1e9
	toEnd := float64(end-last) / 1e9
	avg := sampled / float64(n-1)
	threshold := avg * 1.1
	if toStart >= threshold {
		toStart = avg / 2
	}
	if raw > 0 && firstV >= 0 {
		if toZero := sampled * (firstV / raw); toZero < toStart {
			toStart = toZero
		}
	}
	if toEnd >= threshold {
		toEnd = avg / 2
	}
	return raw * (sampled + toStart + toEnd) / sampled, true
}

// rawIncrease is a counter's increase between its first and last sample in
// (start, end], resets added back, without extrapolation: the bucket deltas a
// window's histogram quantiles are read from, where extrapolation would only
// scale every bucket alike.
func rawIncrease(times []int64, vals []float64, start, end int64) (float64, bool) {
	var raw, prev float64
	n := 0
	for k, t := range times {
		if t <= start || t > end || math.IsNaN(vals[k]) {
			continue
		}
		if n > 0 {
			if vals[k] < prev {
				raw += prev
			}
			raw += vals[k] - prev
		}
		prev = vals[k]
		n++
	}
	return raw, n >= 2
}
