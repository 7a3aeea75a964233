package timeline

import (
	"math"
	"slices"
)

// bucket is one cumulative histogram bucket: observations at most Le.
type bucket struct{ Le, Count float64 }

// bucketQuantile is Prometheus' histogram_quantile(q, …) over classic
// buckets (promql/quantile.go): the q-th observation's rank found in the
// cumulative counts, interpolated linearly inside its bucket, the lowest
// bucket starting at 0 (or at its bound when that is not positive), and a
// rank in the +Inf bucket answered with the highest finite bound. Counts that
// fall with a rising bound (scrapes that straddle an observation) are raised
// to the count before them. NaN without a +Inf bucket or observations.
func bucketQuantile(q float64, bs []bucket) float64 {
	bs = slices.Clone(bs)
	slices.SortFunc(bs, func(a, b bucket) int {
		switch {
		case a.Le < b.Le:
			return -1
		case a.Le > b.Le:
			return 1
		}
		return 0
	})
	if len(bs) < 2 || !math.IsInf(bs[len(bs)-1].Le, +1) {
		return math.NaN()
	}
	for i := 1; i < len(bs); i++ {
		bs[i].Count = max(bs[i].Count, bs[i-1].Count)
	}
	obs := bs[len(bs)-1].Count
	if obs <= 0 {
		return math.NaN()
	}
	rank := q * obs
	b, _ := slices.BinarySearchFunc(bs, rank, func(x bucket, r float64) int {
		if x.Count < r {
			return -1
		}
		return 1
	})
	switch {
	case b == len(bs)-1:
		return bs[len(bs)-2].Le
	case b == 0 && bs[0].Le <= 0:
		return bs[0].Le
	}
	lo, count := 0.0, bs[b].Count
	if b > 0 {
		lo = bs[b-1].Le
		count -= bs[b-1].Count
		rank -= bs[b-1].Count
	}
	return lo + (bs[b].Le-lo)*(rank/count)
}
