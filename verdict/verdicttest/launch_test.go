package verdicttest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLaunchDraw: the launch factor's draw has unit variance, normal or
// with t(3) tails, and the tails are heavier: t(3) puts about 1.4% of its
// draws beyond 3 sd where the normal puts 0.27%.
func TestLaunchDraw(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		df             float64
		tailLo, tailHi float64
	}{{0, 0.0018, 0.0036}, {3, 0.008, 0.02}} {
		const n = 200000
		var ss float64
		tail := 0
		for range n {
			x := launchDraw(rng, tc.df)
			ss += x * x
			if math.Abs(x) > 3 {
				tail++
			}
		}
		// t(3)'s variance estimate converges slowly (no fourth moment).
		if v := ss / n; math.Abs(v-1) > 0.1 {
			t.Errorf("df %v: variance %.3f, want 1", tc.df, v)
		}
		if f := float64(tail) / n; f < tc.tailLo || f > tc.tailHi {
			t.Errorf("df %v: %.4f of draws beyond 3 sd, want %.4f to %.4f", tc.df, f, tc.tailLo, tc.tailHi)
		}
	}
}
