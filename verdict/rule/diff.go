package rule

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Diff is an estimated difference of two log throughputs (log of the
// ratio variant/baseline, or new/old) with its standard error and Student-t
// degrees of freedom. Every test, interval, equivalence and detectable
// difference the verdict reports is computed from one.
type Diff struct {
	// D is the estimated log ratio.
	D float64
	// SE is its standard error; DF its degrees of freedom (0: no estimate of
	// the error, nothing can be concluded).
	SE, DF float64
}

// ok reports whether the estimate has an error estimate at all.
func (e Diff) OK() bool { return e.DF > 0 && !math.IsNaN(e.SE) && !math.IsInf(e.SE, 0) }

func (e Diff) t() distuv.StudentsT { return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: e.DF} }

// P is the two-sided p-value of D = 0; 1 without an error estimate.
func (e Diff) P() float64 {
	if !e.OK() {
		return 1
	}
	if e.SE == 0 {
		if e.D == 0 {
			return 1
		}
		return 0
	}
	return math.Min(1, 2*e.t().Survival(math.Abs(e.D)/e.SE))
}

// quantile is the t quantile for the upper-tail probability q.
func (e Diff) Quantile(q float64) float64 { return e.t().Quantile(1 - q) }

// Interval is the two-sided conf interval of D; (−Inf, +Inf) without an
// error estimate.
func (e Diff) Interval(conf float64) (lo, hi float64) {
	if !e.OK() {
		return math.Inf(-1), math.Inf(1)
	}
	h := e.Quantile((1-conf)/2) * e.SE
	return e.D - h, e.D + h
}

// Equivalent is the two one-sided tests (TOST) at alpha: the whole (1−2α)
// interval of D lies inside [lo, hi].
func (e Diff) Equivalent(lo, hi, alpha float64) bool {
	if !e.OK() {
		return false
	}
	a, b := e.Interval(1 - 2*alpha)
	return a >= lo && b <= hi
}

// MDE is the smallest |D| a two-sided test at alpha would detect with the
// given power, with this standard error and df; +Inf without an error
// estimate.
func (e Diff) MDE(alpha, power float64) float64 {
	if !e.OK() {
		return math.Inf(1)
	}
	return (e.Quantile(alpha/2) + e.Quantile(1-power)) * e.SE
}

// Welch compares the logs of two sets of within-launch samples (a is the
// reference) with Welch's unequal-variance t statistic; D is the difference
// of the mean logs. DF is 0 when either side has fewer than two samples.
func Welch(a, b []float64) Diff {
	ma, va, na := LogMoments(a)
	mb, vb, nb := LogMoments(b)
	out := Diff{D: mb - ma}
	if na < 2 || nb < 2 {
		return out
	}
	wa, wb := va/float64(na), vb/float64(nb)
	out.SE = math.Sqrt(wa + wb)
	if wa+wb == 0 {
		out.DF = float64(na + nb - 2)
		return out
	}
	out.DF = (wa + wb) * (wa + wb) / (wa*wa/float64(na-1) + wb*wb/float64(nb-1))
	return out
}

// LogMoments is the mean and sample variance of log(x) over positive x.
func LogMoments(x []float64) (mean, variance float64, n int) {
	var s float64
	for _, v := range x {
		if v > 0 {
			s += math.Log(v)
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	mean = s / float64(n)
	if n < 2 {
		return mean, 0, n
	}
	var ss float64
	for _, v := range x {
		if v > 0 {
			d := math.Log(v) - mean
			ss += d * d
		}
	}
	return mean, ss / float64(n-1), n
}
