package selection

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// launchesFloor is a lower bound on the launches per configuration that any
// procedure needs to select, at every level, a configuration within delta
// of the best, on a space with the true means truth, when two launches of a
// round differ by noise of sd sdDiff (log scale): the known-variance
// oracle. Each configuration j at each level where it is not the best, a
// gap g behind it, must either be ruled out, which takes n ≥ (z·sdDiff/g)²
// rounds of it beside the best, or, when g < delta, be certified no more
// than delta ahead of the one selected, which takes n ≥ (z·sdDiff/(delta−g))²;
// the oracle takes the cheaper, at z of one test at 5% one-sided, without
// correcting for the many comparisons a race makes (which only raises the
// floor), and at least one launch. The best of a level runs as long as the
// longest comparison with it. A configuration's floor is its largest over
// the levels.
func launchesFloor(truth [][]float64, sdDiff, delta float64) float64 {
	return launchesFloorAt(truth, sdDiff, delta, 1.6448536269514722)
}

// launchesFloorAt is launchesFloor with each test at z: the oracle that
// also guards the k − 1 comparisons with the best at each level by
// Bonferroni, as the race's own allowance does (z of 5%/(k − 1)), takes
// more, and a procedure that keeps the guarantee with an estimated variance
// lies between the two floors or above.
func launchesFloorAt(truth [][]float64, sdDiff, delta, z float64) float64 {
	k, levels := len(truth), len(truth[0])
	need := make([]float64, k)
	for c := range levels {
		best := 0
		for i := range k {
			if truth[i][c] > truth[best][c] {
				best = i
			}
		}
		longest := 1.0
		for j := range k {
			if j == best {
				continue
			}
			g := truth[best][c] - truth[j][c]
			n := math.Inf(1)
			if g > 0 {
				n = math.Pow(z*sdDiff/g, 2)
			}
			if g < delta {
				n = math.Min(n, math.Pow(z*sdDiff/(delta-g), 2))
			}
			n = math.Max(1, math.Ceil(n))
			need[j] = math.Max(need[j], n)
			longest = math.Max(longest, n)
		}
		need[best] = math.Max(need[best], longest)
	}
	sum := 0.0
	for _, n := range need {
		sum += n
	}
	return sum / float64(k)
}

// TestLaunchesFloor: the floor's arithmetic on spaces whose answer is known,
// then, with -v, the floor of the study's spaces beside the goal of three
// launches per configuration (docs/METHOD.md, "The launches goal"): at 2%
// launch noise (two launches of a round differ by 2√2%) and delta 2% the
// speculative space of 24 has a floor of 7.3.
func TestLaunchesFloor(t *testing.T) {
	sd := 0.02 * math.Sqrt2
	for _, tc := range []struct {
		name  string
		truth [][]float64
		want  float64
	}{
		// 10% apart: ruled out on its first launch.
		{"far apart", [][]float64{{0}, {-0.10}}, 1},
		// Tied: neither can be ruled out; certifying either within 2% of
		// the other takes ⌈(1.645·2.83/2)²⌉ = 6 rounds of both.
		{"tied", [][]float64{{0}, {0}}, 6},
		// One delta apart: ruling out and certifying cost alike, 6 each.
		{"delta apart", [][]float64{{0}, {-0.02}}, 6},
		// The far one at 1, the tied pair at 6: (1+6+6)/3.
		{"a pair and a far one", [][]float64{{0}, {0}, {-0.5}}, 13.0 / 3},
	} {
		if got := launchesFloor(tc.truth, sd, 0.02); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: floor %.3f, want %.3f", tc.name, got, tc.want)
		}
	}
	// Guarding more comparisons costs more: the Bonferroni oracle's floor
	// is never below the plain one's, and on a tied pair (one comparison)
	// they agree.
	tied := [][]float64{{0}, {0}}
	if a, b := launchesFloor(tied, sd, 0.02), launchesFloorAt(tied, sd, 0.02, bonferroniZ(2)); a != b {
		t.Errorf("a tied pair: floor %.1f, with Bonferroni over one comparison %.1f; want equal", a, b)
	}
	var b strings.Builder
	b.WriteString("| space | delta | launch 1% | launch 2% | launch 3% | launch 2%, Bonferroni over k − 1 |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, sp := range spaces() {
		for _, delta := range []float64{0.02, 0.03, 0.05} {
			fmt.Fprintf(&b, "| %s | %.0f%% |", sp.name, 100*delta)
			for _, launch := range []float64{0.01, 0.02, 0.03} {
				fmt.Fprintf(&b, " %.1f |", launchesFloor(sp.truth, launch*math.Sqrt2, delta))
			}
			plain := launchesFloor(sp.truth, 0.02*math.Sqrt2, delta)
			adj := launchesFloorAt(sp.truth, 0.02*math.Sqrt2, delta, bonferroniZ(len(sp.truth)))
			if adj < plain {
				t.Errorf("%s at delta %.0f%%: the Bonferroni floor %.1f is below the plain one %.1f", sp.name, 100*delta, adj, plain)
			}
			fmt.Fprintf(&b, " %.1f |\n", adj)
		}
	}
	t.Logf("launches per configuration that a known-variance oracle needs:\n%s", b.String())
}

// bonferroniZ is the one-sided z of 5% shared over the k − 1 comparisons
// with the best.
func bonferroniZ(k int) float64 {
	return distuv.UnitNormal.Quantile(1 - 0.05/float64(k-1))
}
