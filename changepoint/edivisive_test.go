package changepoint

import (
	"math/rand/v2"
	"testing"
)

// series is n points of dims dimensions, each coordinate normal with sd 1,
// shifted by step from index at on (no shift when at < 0).
func series(r *rand.Rand, n, dims, at int, step float64) [][]float64 {
	xs := make([][]float64, n)
	for i := range xs {
		xs[i] = make([]float64, dims)
		for k := range xs[i] {
			xs[i][k] = r.NormFloat64()
			if at >= 0 && i >= at {
				xs[i][k] += step
			}
		}
	}
	return xs
}

// TestFindHonesty: on 12 points with no change, a change is named in at
// most 8% of 200 series (the test's level is 5%); a step of 3 sd at index
// 8, seen on 3 dimensions at once, is found in at least 90% of them and
// placed at 8 ± 1 in at least 90% of those.
func TestFindHonesty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200
	falseAlarms, found, placed := 0, 0, 0
	for i := range n {
		if len(Find(series(r, 12, 3, -1, 0), Options{Seed: uint64(i)})) > 0 {
			falseAlarms++
		}
		cs := Find(series(r, 12, 3, 8, -3), Options{Seed: uint64(i)})
		if len(cs) > 0 {
			found++
			for _, c := range cs {
				if c.At >= 7 && c.At <= 9 {
					placed++
					break
				}
			}
		}
	}
	t.Logf("no change: a change named in %d of %d; a step at 8: found in %d, placed at 8±1 in %d", falseAlarms, n, found, placed)
	if falseAlarms > n*8/100 {
		t.Errorf("a change named in %d of %d series without one, want at most %d", falseAlarms, n, n*8/100)
	}
	if found < n*9/10 || placed < found*9/10 {
		t.Errorf("a step found in %d of %d, placed right in %d", found, n, placed)
	}
}

// TestFindTwoChanges: two steps are both found, by bisection.
func TestFindTwoChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	xs := series(r, 24, 2, 8, 4)
	for i := 16; i < 24; i++ {
		for k := range xs[i] {
			xs[i][k] -= 8
		}
	}
	cs := Find(xs, Options{Seed: 1})
	if len(cs) != 2 || cs[0].At < 7 || cs[0].At > 9 || cs[1].At < 15 || cs[1].At > 17 {
		t.Errorf("changes %+v, want two, at 8 and 16", cs)
	}
}

// TestFindShort: a series too short for two points on each side has no
// change.
func TestFindShort(t *testing.T) {
	if cs := Find([][]float64{{0}, {0}, {9}}, Options{}); len(cs) != 0 {
		t.Errorf("changes %+v in 3 points", cs)
	}
}
