package verdict

import (
	"math"
)

// The launch-to-launch variance of a levels × rounds table of log
// throughputs (or of their differences between two scenarios), shared by
// every comparison the verdict and diff make. docs/METHOD.md derives it.
//
// Each round is one launch (or one pair of launches) and the rounds are
// independent of each other; the levels of one round are not: a launch that
// came up 1% slow is slow at every level (a launch effect), a drift during
// the launch moves neighbouring levels together, a burst of load on the host
// slows the levels it overlaps. The variance of one cell about its level's
// mean is estimated by pooling the within-level sums of squares over all
// levels, which is unbiased whatever that correlation. How many degrees of
// freedom the pool is worth does depend on it: C levels that move as one
// are worth one level, C independent ones are worth C. The df are
// Satterthwaite's for the pool, from the covariance of the levels across
// rounds, with no assumption about its shape:
//
//	df = (Σ_c w_c S_cc)² / Σ_c Σ_c' w_cc' S_cc'²
//
// where S is the sample covariance of the levels over rounds (each pair of
// levels over the rounds both were measured in) and w the rounds behind each
// entry, less one. In a full table this is (R−1)·(tr S)²/tr(S²): R−1 times
// an effective number of independent levels between 1 and C. With the
// sample covariance in place of the true one it leans low (with R rounds S
// has rank R−1 at most, so the effective number is at most R−1): a
// conservative error at few rounds, a small one at the default rounds.

// launchVar is the pooled variance of one cell about its level's mean and
// its degrees of freedom.
type launchVar struct {
	// Var is the variance of one cell about its level's mean, in (log
	// units)².
	Var float64
	// DF is the effective degrees of freedom of Var; 0 when Var cannot be
	// estimated (no level was measured in two rounds).
	DF float64
}

// measuredCell reports whether x[c][r] holds a measurement.
func measuredCell(x [][]float64, c, r int) bool { return r < len(x[c]) && finite(x[c][r]) }

// estimateLaunchVar returns the pooled within-level variance of x (levels ×
// rounds, NaN for a missing cell) with its effective df.
func estimateLaunchVar(x [][]float64) launchVar {
	var ss float64
	var df int
	for c := range x {
		var s float64
		k := 0
		for r := range x[c] {
			if measuredCell(x, c, r) {
				s += x[c][r]
				k++
			}
		}
		if k < 2 {
			continue
		}
		m := s / float64(k)
		for r := range x[c] {
			if measuredCell(x, c, r) {
				ss += (x[c][r] - m) * (x[c][r] - m)
			}
		}
		df += k - 1
	}
	if df <= 0 {
		return launchVar{}
	}
	lv := launchVar{Var: ss / float64(df), DF: float64(df)}
	if eff := effectiveDF(x); eff > 0 {
		lv.DF = math.Min(eff, float64(df))
	}
	return lv
}

// effectiveDF is Satterthwaite's df for the pooled within-level variance of
// x from the covariance of its levels across rounds (the formula in the
// comment above); 0 when every cell equals its level's mean.
func effectiveDF(x [][]float64) float64 {
	var num, den float64
	for c := range x {
		for d := range x {
			var mc, md float64
			k := 0
			for r := range min(len(x[c]), len(x[d])) {
				if measuredCell(x, c, r) && measuredCell(x, d, r) {
					mc += x[c][r]
					md += x[d][r]
					k++
				}
			}
			if k < 2 {
				continue
			}
			mc /= float64(k)
			md /= float64(k)
			var s float64
			for r := range min(len(x[c]), len(x[d])) {
				if measuredCell(x, c, r) && measuredCell(x, d, r) {
					s += (x[c][r] - mc) * (x[d][r] - md)
				}
			}
			w := float64(k - 1)
			s /= w
			if c == d {
				num += w * s
			}
			den += w * s * s
		}
	}
	if den <= 0 {
		return 0
	}
	return num * num / den
}
