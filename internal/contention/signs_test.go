package contention

import (
	"math"
	"testing"
)

func TestSignTest(t *testing.T) {
	for _, tt := range []struct {
		neg, pos int
		want     float64
	}{
		{0, 0, 1},
		{5, 5, 1},
		{0, 5, 2.0 / 32},
		{5, 0, 2.0 / 32},
		{1, 9, 2 * 11.0 / 1024},
		{3, 3, 1},
		{0, 12, 2.0 / 4096},
	} {
		if got := SignTest(tt.neg, tt.pos); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("SignTest(%d, %d) = %.6f, want %.6f", tt.neg, tt.pos, got, tt.want)
		}
	}
}

// TestLimit: the binomial tail worked by hand (for 20 trials at 5%,
// P(X>3) is 1.6% and P(X>2) 7.5%; for 3, P(X>1) is 0.73%), the same bounds
// as the verdict's end-to-end A/A test.
func TestLimit(t *testing.T) {
	for _, tt := range []struct {
		n    int
		tail float64
		want int
	}{
		{1, 0.02, 1}, {4, 0.02, 1}, {20, 0.02, 3}, {40, 0.02, 5}, {3, 0.01, 1}, {2, 0.01, 1},
	} {
		if got := Limit(tt.n, 0.05, tt.tail); got != tt.want {
			t.Errorf("Limit(%d, 0.05, %g) = %d, want %d", tt.n, tt.tail, got, tt.want)
		}
		if p := Exceeds(tt.n, 0.05, tt.want); p > tt.tail {
			t.Errorf("Exceeds(%d, 0.05, %d) = %.4f, above %g", tt.n, tt.want, p, tt.tail)
		}
	}
}

// TestRateInterval against the closed forms at the ends (no success: the
// upper end is 1 − (α/2)^(1/n); all: the lower end is (α/2)^(1/n)) and R's
// binom.test(2, 40): [0.006114, 0.169197].
func TestRateInterval(t *testing.T) {
	for _, tt := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 40, 0, 1 - math.Pow(0.025, 1.0/40)},
		{40, 40, math.Pow(0.025, 1.0/40), 1},
		{2, 40, 0.006114, 0.169197},
		{0, 0, 0, 1},
	} {
		lo, hi := RateInterval(tt.k, tt.n, 0.95)
		if math.Abs(lo-tt.lo) > 1e-5 || math.Abs(hi-tt.hi) > 1e-5 {
			t.Errorf("RateInterval(%d, %d) = [%.6f, %.6f], want [%.6f, %.6f]", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestMeanSESigns(t *testing.T) {
	m, se := MeanSE([]float64{-1, 0, 1, 4})
	// sd of −1, 0, 1, 4: sqrt(14/3); over √4.
	if math.Abs(m-1) > 1e-12 || math.Abs(se-math.Sqrt(14.0/3)/2) > 1e-12 {
		t.Errorf("MeanSE = %v, %v", m, se)
	}
	if m, se := MeanSE([]float64{3}); m != 3 || se != 0 {
		t.Errorf("MeanSE of one = %v, %v", m, se)
	}
	if neg, pos := Signs([]float64{-1, 0, 1, 4}); neg != 1 || pos != 2 {
		t.Errorf("Signs = %d, %d, want 1, 2", neg, pos)
	}
}

// TestTTest against R's t.test(c(1, 2, 3, 4)): t = 3.873, df = 3,
// p-value = 0.03047.
func TestTTest(t *testing.T) {
	tt, p := TTest([]float64{1, 2, 3, 4})
	if math.Abs(tt-3.872983) > 1e-5 || math.Abs(p-0.03047) > 1e-4 {
		t.Errorf("TTest = %.6f, %.5f, want 3.872983, 0.03047", tt, p)
	}
	if _, p := TTest([]float64{2}); p != 1 {
		t.Errorf("TTest of one value: p = %v, want 1", p)
	}
}
