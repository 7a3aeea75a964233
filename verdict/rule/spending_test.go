package rule

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestBoundariesKnownValues checks the integration against published
// boundaries: the O'Brien–Fleming-type spending applied to each side at α/2
// (the form of R's ldbounds and gsDesign's sfLDOF, 4 − 4Φ(z_{1−α/4}/√t) in
// all), five equally spaced looks, two-sided α = 0.05: 4.877, 3.357, 2.680,
// 2.290, 2.031.
func TestBoundariesKnownValues(t *testing.T) {
	const alpha = 0.05
	z := distuv.UnitNormal.Quantile(1 - alpha/4)
	perSide := func(t float64) float64 { return 4 * normSurvival(z/math.Sqrt(t)) }
	got := SpendBoundaries(perSide, []float64{0.2, 0.4, 0.6, 0.8, 1})
	want := []float64{4.877, 3.357, 2.680, 2.290, 2.031}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 0.002 {
			t.Errorf("look %d: boundary %.4f, want %.3f", i+1, got[i], want[i])
		}
	}
	t.Logf("boundaries %.4f", got)
}

// TestBoundariesSpendAlpha: by simulation of the joint normal (independent
// increments), the chance of ever crossing the boundaries of the plan's
// looks (rounds 3 to 12 of 12) is alpha, and each look's crossing
// probability is what the spending function gives it.
func TestBoundariesSpendAlpha(t *testing.T) {
	var fracs []float64
	for r := 3; r <= 12; r++ {
		fracs = append(fracs, float64(r)/12)
	}
	for _, alpha := range []float64{0.05, 0.1} {
		c := zBoundaries(alpha, fracs)
		rng := rand.New(rand.NewPCG(1, 2))
		const n = 400000
		cross := 0
		for range n {
			var s, prev float64
			for k, tk := range fracs {
				s += math.Sqrt(tk-prev) * rng.NormFloat64()
				prev = tk
				if math.Abs(s/math.Sqrt(tk)) >= c[k] {
					cross++
					break
				}
			}
		}
		rate := float64(cross) / n
		se := math.Sqrt(alpha * (1 - alpha) / n)
		t.Logf("alpha %.2f: boundaries %.3f; crossed in %.4f", alpha, c, rate)
		if math.Abs(rate-alpha) > 4*se {
			t.Errorf("alpha %.2f: crossed in %.4f of draws, want %.4f ± %.4f", alpha, rate, alpha, 4*se)
		}
	}
}
