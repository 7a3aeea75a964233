package rule

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// Group-sequential boundaries by alpha spending (Lan & DeMets 1983): a test
// looked at after every round may reject at any look, and the chance that it
// ever does under the null is held at alpha by spending alpha over the
// looks, α(t) of it by information fraction t. The boundaries are computed
// for a standardised statistic with independent increments (a mean of
// independent rounds: Z_k·√t_k is a Brownian motion at time t_k) by exact
// recursive numerical integration of its joint normal law (Armitage,
// McPherson & Rowe 1969; Jennison & Turnbull 2000, ch. 19), not by
// simulation: the density of the score on the region not yet stopped is
// carried from look to look on a grid. docs/METHOD.md derives it.

// SpendOBF is the Lan–DeMets spending function of O'Brien–Fleming shape,
// two-sided: α(t) = 2 − 2Φ(z_{1−α/2}/√t). It spends almost nothing at the
// first looks (a decision there needs a difference far beyond the noise)
// and keeps the last look's boundary close to the fixed design's, so little
// power is lost against a campaign that always runs to the end.
func SpendOBF(alpha, t float64) float64 {
	if t >= 1 {
		return alpha
	}
	if t <= 0 {
		return 0
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	return 2 * normSurvival(z/math.Sqrt(t))
}

// normSurvival is 1 − Φ(x), accurate far into the upper tail.
func normSurvival(x float64) float64 { return 0.5 * math.Erfc(x/math.Sqrt2) }

// normPDF is the standard normal density.
func normPDF(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }

// boundaryGrid is the number of grid points (odd, for Simpson's rule) the
// score's density is carried on from look to look. The density is smooth and
// its support at most a few units wide, so 201 points give the boundaries to
// about five decimals (TestBoundariesKnownValues).
const boundaryGrid = 201

// maxBoundary is the largest z boundary searched: a look whose spending is
// (numerically) nothing has an infinite one.
const maxBoundary = 40

// zBoundaries returns the two-sided z boundaries c_1..c_K for looks at
// information fractions fracs (increasing, in (0, 1]) spending alpha by
// SpendOBF.
func zBoundaries(alpha float64, fracs []float64) []float64 {
	return SpendBoundaries(func(t float64) float64 { return SpendOBF(alpha, t) }, fracs)
}

// SpendBoundaries returns the two-sided z boundaries c_1..c_K for looks at
// information fractions fracs (increasing, in (0, 1]) under the cumulative
// two-sided spending spend(t): under the null, P(|Z_j| < c_j for j < k,
// |Z_k| ≥ c_k) is spend(t_k) − spend(t_{k−1}). A look with nothing to spend
// has +Inf.
func SpendBoundaries(spend func(t float64) float64, fracs []float64) []float64 {
	out := make([]float64, len(fracs))
	var (
		grid, dens []float64 // the score S = Z·√t on the continuation region, and its sub-density
		spent      float64
		prevT      float64
	)
	for k, t := range fracs {
		target := spend(t) - spent
		if k == 0 {
			c := math.Inf(1)
			if target > 0 {
				c = distuv.UnitNormal.Quantile(1 - target/2)
			}
			out[0] = c
			spent += target
			grid, dens = scoreGrid(c, t), nil
			for _, s := range grid {
				dens = append(dens, normPDF(s/math.Sqrt(t))/math.Sqrt(t))
			}
			prevT = t
			continue
		}
		sd := math.Sqrt(t - prevT)
		w := simpsonWeights(grid)
		cross := func(c float64) float64 {
			b := c * math.Sqrt(t)
			var p float64
			for i, u := range grid {
				p += w[i] * dens[i] * (normSurvival((b+u)/sd) + normSurvival((b-u)/sd))
			}
			return p
		}
		c := math.Inf(1)
		if target > 1e-15 {
			lo, hi := 0.0, float64(maxBoundary)
			for range 80 {
				mid := (lo + hi) / 2
				if cross(mid) > target {
					lo = mid
				} else {
					hi = mid
				}
			}
			c = hi
			spent += cross(c)
		}
		out[k] = c
		next := scoreGrid(c, t)
		nd := make([]float64, len(next))
		for j, s := range next {
			var f float64
			for i, u := range grid {
				f += w[i] * dens[i] * normPDF((s-u)/sd)
			}
			nd[j] = f / sd
		}
		grid, dens, prevT = next, nd, t
	}
	return out
}

// scoreGrid is the grid of the score S = Z·√t over the region a look with
// boundary c does not stop, |Z| < c; an infinite boundary is cut where the
// score's density is nothing.
func scoreGrid(c, t float64) []float64 {
	b := math.Min(c, 12) * math.Sqrt(t)
	g := make([]float64, boundaryGrid)
	for i := range g {
		g[i] = -b + 2*b*float64(i)/float64(boundaryGrid-1)
	}
	return g
}

// simpsonWeights are Simpson's rule's weights on an evenly spaced grid of an
// odd number of points.
func simpsonWeights(g []float64) []float64 {
	n := len(g)
	h := (g[n-1] - g[0]) / float64(n-1)
	w := make([]float64, n)
	for i := range w {
		switch {
		case i == 0 || i == n-1:
			w[i] = h / 3
		case i%2 == 1:
			w[i] = 4 * h / 3
		default:
			w[i] = 2 * h / 3
		}
	}
	return w
}

// nominalLevels are the boundaries as two-sided nominal significance levels,
// 2(1 − Φ(c_k)): what a statistic with another reference distribution
// (Student's t with the look's df) is held to, the "significance level
// approach" of Jennison & Turnbull (2000, §3.8), which keeps the error rates
// close to nominal when the variance is estimated at each look.
type nominalLevels []float64

// boundaryCache holds nominal levels by alpha and look schedule: a verdict
// asks for the same few (alpha over each family size, the interval's and
// the tie's) at every comparison, and every campaign of a plan shares its
// schedule.
var boundaryCache = struct {
	sync.Mutex
	m map[string]nominalLevels
}{m: map[string]nominalLevels{}}

// sequentialLevels returns the nominal two-sided level of each look at
// fracs, spending alpha by SpendOBF; cached, and not to be modified.
func sequentialLevels(alpha float64, fracs []float64) nominalLevels {
	var key strings.Builder
	key.WriteString(strconv.FormatFloat(alpha, 'g', -1, 64))
	for _, t := range fracs {
		key.WriteByte(' ')
		key.WriteString(strconv.FormatFloat(t, 'g', -1, 64))
	}
	boundaryCache.Lock()
	got, ok := boundaryCache.m[key.String()]
	boundaryCache.Unlock()
	if ok {
		return got // read-only
	}
	zs := zBoundaries(alpha, fracs)
	out := make(nominalLevels, len(zs))
	for i, z := range zs {
		out[i] = 2 * normSurvival(z)
	}
	boundaryCache.Lock()
	boundaryCache.m[key.String()] = out
	boundaryCache.Unlock()
	return out
}
