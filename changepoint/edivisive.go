// Package changepoint finds where a series of runs changed: E-divisive
// means (Matteson & James 2014, "A Nonparametric Approach for Multiple
// Change Point Analysis of Multivariate Data", JASA 109(505)), the method
// nightly-benchmark regression monitors use because it assumes no
// distribution and finds several changes by bisection. Each point is a
// vector (one run's figures at every level), so one test per series looks
// at all levels at once instead of one test per level.
package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Options tune Find. The zero value means the defaults.
type Options struct {
	// Alpha is the permutation test's significance level for each change
	// (DefaultAlpha when zero).
	Alpha float64
	// Permutations is how many random orders each test draws
	// (DefaultPermutations when zero).
	Permutations int
	// MinSize is the fewest points on either side of a change
	// (DefaultMinSize when zero).
	MinSize int
	// Seed seeds the permutations, so that the same series gives the same
	// answer.
	Seed uint64
}

// Defaults of Find.
const (
	DefaultAlpha        = 0.05
	DefaultPermutations = 199
	// DefaultMinSize: a change needs two runs on each side, so that one
	// odd night is not a change.
	DefaultMinSize = 2
)

// Change is one change point: the index of the first point after it, the
// permutation test's p-value, and the divergence statistic that located it.
type Change struct {
	At   int
	P    float64
	Stat float64
}

// Find returns the change points of xs (each a vector of equal length), in
// order of index: the most divergent split of a segment is tested by
// permutation, kept when significant at Alpha, and its two sides searched
// again, until no segment holds a significant change.
func Find(xs [][]float64, o Options) []Change {
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Permutations <= 0 {
		o.Permutations = DefaultPermutations
	}
	if o.MinSize <= 0 {
		o.MinSize = DefaultMinSize
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x6564697669736976))
	d := distances(xs)
	var out []Change
	segments := [][2]int{{0, len(xs)}}
	for len(segments) > 0 {
		// The segment whose best split diverges most is tested first, as
		// the method's bisection does.
		best, bestStat, bestAt := -1, 0.0, 0
		for i, s := range segments {
			if at, stat, ok := bestSplit(d, s[0], s[1], o.MinSize); ok && (best < 0 || stat > bestStat) {
				best, bestStat, bestAt = i, stat, at
			}
		}
		if best < 0 {
			break
		}
		s := segments[best]
		segments = slices.Delete(segments, best, best+1)
		p := permutationP(d, s[0], s[1], bestStat, o, r)
		if p > o.Alpha {
			// The most divergent split left is not significant: none
			// of the others, less divergent, is tested (the method's
			// stopping rule, which holds its error to alpha).
			break
		}
		out = append(out, Change{At: bestAt, P: p, Stat: bestStat})
		segments = append(segments, [2]int{s[0], bestAt}, [2]int{bestAt, s[1]})
	}
	slices.SortFunc(out, func(a, b Change) int { return a.At - b.At })
	return out
}

// distances are the Euclidean distances between every two points.
func distances(xs [][]float64) [][]float64 {
	n := len(xs)
	d := make([][]float64, n)
	for i := range d {
		d[i] = make([]float64, n)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			var s float64
			for k := range xs[i] {
				diff := xs[i][k] - xs[j][k]
				s += diff * diff
			}
			d[i][j], d[j][i] = math.Sqrt(s), math.Sqrt(s)
		}
	}
	return d
}

// stat is the scaled energy divergence of the split of the points idx[lo:hi]
// at lo+k (α = 1): (k·m / (k+m)) · (2·mean|x−y| − mean|x−x'| − mean|y−y'|).
func stat(d [][]float64, idx []int, lo, at, hi int) float64 {
	k, m := at-lo, hi-at
	var xy, xx, yy float64
	for i := lo; i < at; i++ {
		for j := at; j < hi; j++ {
			xy += d[idx[i]][idx[j]]
		}
		for j := i + 1; j < at; j++ {
			xx += d[idx[i]][idx[j]]
		}
	}
	for i := at; i < hi; i++ {
		for j := i + 1; j < hi; j++ {
			yy += d[idx[i]][idx[j]]
		}
	}
	e := 2 * xy / float64(k*m)
	if k > 1 {
		e -= 2 * xx / float64(k*(k-1))
	}
	if m > 1 {
		e -= 2 * yy / float64(m*(m-1))
	}
	return float64(k*m) / float64(k+m) * e
}

// bestSplit is the split of [lo, hi) with the largest divergence, each side
// at least min long.
func bestSplit(d [][]float64, lo, hi, min int) (at int, best float64, ok bool) {
	idx := make([]int, len(d))
	for i := range idx {
		idx[i] = i
	}
	return bestSplitOf(d, idx, lo, hi, min)
}

func bestSplitOf(d [][]float64, idx []int, lo, hi, min int) (at int, best float64, ok bool) {
	for t := lo + min; t <= hi-min; t++ {
		if s := stat(d, idx, lo, t, hi); !ok || s > best {
			at, best, ok = t, s, true
		}
	}
	return at, best, ok
}

// permutationP is the share of random orders of the segment [lo, hi) whose
// best split diverges at least as much as observed, counting the observed
// order itself (so never 0).
func permutationP(d [][]float64, lo, hi int, observed float64, o Options, r *rand.Rand) float64 {
	idx := make([]int, len(d))
	for i := range idx {
		idx[i] = i
	}
	seg := idx[lo:hi]
	over := 1
	for range o.Permutations {
		r.Shuffle(len(seg), func(i, j int) { seg[i], seg[j] = seg[j], seg[i] })
		if _, s, _ := bestSplitOf(d, idx, lo, hi, o.MinSize); s >= observed {
			over++
		}
	}
	return float64(over) / float64(o.Permutations+1)
}
