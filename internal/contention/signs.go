package contention

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// SignTest is the two-sided sign test of neg values below zero against pos
// above it (zeros left out): the chance, with no difference, that a split
// is at least as uneven. Signs are the one figure of a campaign that the
// machine's load cannot inflate: a neighbour that slows one launch by 30%
// moves a mean far more than it moves a count of signs.
func SignTest(neg, pos int) float64 {
	n := neg + pos
	if n == 0 {
		return 1
	}
	k := min(neg, pos)
	p := 2 * distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(k))
	return min(p, 1)
}

// Limit is the most of n independent trials, each a success with
// probability p, that may succeed before the count is itself evidence
// against p: the smallest k with P(X > k) ≤ tail.
func Limit(n int, p, tail float64) int {
	b := distuv.Binomial{N: float64(n), P: p}
	for k := 0; k < n; k++ {
		if 1-b.CDF(float64(k)) <= tail {
			return k
		}
	}
	return n
}

// Exceeds is the chance that n trials, each a success with probability p,
// give more than k successes.
func Exceeds(n int, p float64, k int) float64 {
	return 1 - distuv.Binomial{N: float64(n), P: p}.CDF(float64(k))
}

// RateInterval is the exact (Clopper–Pearson) two-sided interval at
// confidence conf for a rate of k successes in n trials.
func RateInterval(k, n int, conf float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	a := (1 - conf) / 2
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a)
	}
	hi = 1
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
	}
	return lo, hi
}

// MeanSE is the mean of xs and its standard error (0 with fewer than two).
func MeanSE(xs []float64) (mean, se float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// Signs counts the values of xs below and above zero.
func Signs(xs []float64) (neg, pos int) {
	for _, x := range xs {
		switch {
		case x < 0:
			neg++
		case x > 0:
			pos++
		}
	}
	return neg, pos
}

// TTest is the one-sample t-test of xs against zero: the statistic and
// its two-sided p-value with len(xs) − 1 degrees of freedom (p = 1 with
// fewer than two values or none spread).
func TTest(xs []float64) (t, p float64) {
	m, se := MeanSE(xs)
	if len(xs) < 2 || se == 0 {
		return 0, 1
	}
	t = m / se
	return t, 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Survival(math.Abs(t))
}
