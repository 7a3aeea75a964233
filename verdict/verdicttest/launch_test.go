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

// TestDrifted: the Ornstein–Uhlenbeck drift keeps its sd however long it
// runs; the random walk's variance grows with time, by Drift² every
// DriftTau.
func TestDrifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const hosts, steps = 4000, 20
	for _, walk := range []bool{false, true} {
		e := Engine{Drift: 0.01, DriftTau: 600, DriftWalk: walk}
		var ss float64
		for range hosts {
			d := e.Drift * rng.NormFloat64()
			for range steps {
				d = e.drifted(d, 600, rng)
			}
			ss += d * d
		}
		sd := math.Sqrt(ss / hosts)
		want := 0.01
		if walk {
			want = 0.01 * math.Sqrt(steps+1)
		}
		if math.Abs(sd/want-1) > 0.05 {
			t.Errorf("walk %v: sd after %d taus %.4f, want %.4f", walk, steps, sd, want)
		}
	}
	if d := (Engine{}).drifted(0.3, 10, rng); d != 0.3 {
		t.Errorf("no drift moved it to %v", d)
	}
}
