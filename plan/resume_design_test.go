package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// A design on paper, checked in simulation before anything is built on it
// (docs/METHOD.md, "Where the night goes"): a second level of replication
// inside a launch. An engine that releases and resumes its GPU memory
// without a restart (vLLM's sleep mode, SGLang's memory release and resume)
// could sweep a configuration k times per launch, one load paying for k
// sweeps. A sweep's log throughput is then
//
//	μ_s + L + R + e,  L ~ N(0, σL²) per launch, R ~ N(0, σR²) per resume, e per sweep,
//
// where L is what a restart re-draws (memory layout, autotuning, clocks at
// start) and R what a resume re-draws. The verdict's unit stays the launch:
// the k sweeps of a launch average into its figure, whose variance is
// σL² + (σR² + σe²)/k, so the paired test over launches keeps its size
// whatever k is. Treating the sweeps as launches does not: their variance
// misses σL, and the size grows with σL/σR.

// resumeCampaign is one A/B campaign of n rounds, each launching both
// scenarios once with k sweeps each (a resume before every sweep after the
// first); diff the true log difference. It returns the p-values of the
// paired t test over launches (each launch's sweeps averaged) and of the
// one that takes every sweep as a launch.
func resumeCampaign(rng *rand.Rand, n, k int, sdL, sdR, sdE, diff float64) (launches, sweeps float64) {
	var d, ds []float64
	for range n {
		var a, b float64
		la, lb := sdL*rng.NormFloat64(), sdL*rng.NormFloat64()
		for range k {
			xa := la + sdR*rng.NormFloat64() + sdE*rng.NormFloat64()
			xb := lb + sdR*rng.NormFloat64() + sdE*rng.NormFloat64() + diff
			a += xa / float64(k)
			b += xb / float64(k)
			ds = append(ds, xb-xa)
		}
		d = append(d, b-a)
	}
	return pairedP(d), pairedP(ds)
}

// pairedP is the two-sided p-value of a one-sample t test of mean zero.
func pairedP(d []float64) float64 {
	n := float64(len(d))
	var m, ss float64
	for _, x := range d {
		m += x / n
	}
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	se := math.Sqrt(ss / (n - 1) / n)
	t := math.Abs(m) / se
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Survival(t)
}

// bestResumes is the sweeps per launch that reach a given precision in the
// least time: with a launch's fixed cost a (its load, less a resume's) and
// b per sweep (a resume and the sweep), n(k) ∝ σL² + (σR² + σe²)/k launches
// of a + k·b each, least at k* = √((σR² + σe²)/σL² · a/b), the classic
// optimum of two-stage sampling (W. G. Cochran, Sampling Techniques, 3rd
// ed., 1977, §10.6), rounded to the better of its two neighbours.
func bestResumes(sdL, sdW, a, b float64) int {
	cost := func(k int) float64 { return (sdL*sdL + sdW*sdW/float64(k)) * (a + float64(k)*b) }
	if sdL == 0 {
		return math.MaxInt32
	}
	x := sdW / sdL * math.Sqrt(a/b)
	lo := max(1, int(math.Floor(x)))
	if cost(lo+1) < cost(lo) {
		return lo + 1
	}
	return lo
}

// TestResumeDesign: the size of both analyses under what a resume might
// re-draw, from nothing to twice a restart's variation; the time to a ±2%
// MDE against the sweeps per launch, for the seeds' launch (ten minutes of
// load, six of sweep) and a resume of one minute; and the optimum k*. A
// resume pays only when it re-draws more than a restart does, which only a
// measurement on the engine can say, so bakeoff keeps the launch as its
// replicate until one has. -v prints the tables docs/METHOD.md shows.
func TestResumeDesign(t *testing.T) {
	const (
		campaigns = 4000
		n         = 6 // rounds
		sdL       = 0.015
		sdE       = 0.003
		load      = 10.0 // minutes
		sweep     = 6.0
		resume    = 1.0
	)
	rng := rand.New(rand.NewPCG(41, 5))
	var size strings.Builder
	size.WriteString("| σR / σL | k | size, launches | size, sweeps as launches | power at 2%, launches |\n| --- | --- | --- | --- | --- |\n")
	for _, ratio := range []float64{0, 0.5, 1, 2} {
		sdR := ratio * sdL
		for _, k := range []int{2, 4} {
			var fpL, fpS, hits int
			for range campaigns {
				pl, ps := resumeCampaign(rng, n, k, sdL, sdR, sdE, 0)
				if pl < 0.05 {
					fpL++
				}
				if ps < 0.05 {
					fpS++
				}
				if p, _ := resumeCampaign(rng, n, k, sdL, sdR, sdE, 0.02); p < 0.05 {
					hits++
				}
			}
			sl, ss := float64(fpL)/campaigns, float64(fpS)/campaigns
			fmt.Fprintf(&size, "| %.1f | %d | %.1f%% | %.1f%% | %.1f%% |\n", ratio, k, 100*sl, 100*ss, 100*float64(hits)/campaigns)
			// The unit kept: the size within the Monte Carlo error of 5%
			// (its sd at 4000 campaigns is 0.34 points).
			if sl > 0.065 {
				t.Errorf("σR/σL %.1f, k %d: launches' size %.1f%%", ratio, k, 100*sl)
			}
			// The sweeps taken as launches: oversized wherever a restart
			// re-draws more than a resume.
			if ratio <= 1 && ss < 0.10 {
				t.Errorf("σR/σL %.1f, k %d: sweeps as launches kept size %.1f%%; the study cannot show the danger", ratio, k, 100*ss)
			}
		}
	}
	var cost strings.Builder
	cost.WriteString("| σR / σL | k* | hours to ±2% MDE at k = 1, 2, 3, 4 |\n| --- | --- | --- |\n")
	a, b := load-resume, resume+sweep
	for _, ratio := range []float64{0, 0.5, 1, 2, 4} {
		sdW := math.Hypot(ratio*sdL, sdE)
		k := bestResumes(sdL, sdW, a, b)
		var hours []string
		best, bestK := math.Inf(1), 0
		for kk := 1; kk <= 4; kk++ {
			// Launches per scenario for a ±2% MDE (80% power, 5%
			// two-sided, normal approximation), two scenarios.
			v := 2 * (sdL*sdL + sdW*sdW/float64(kk))
			launches := math.Ceil(v * math.Pow((1.96+0.84)/0.02, 2))
			h := 2 * launches * (a + float64(kk)*b) / 60
			hours = append(hours, fmt.Sprintf("%.1f", h))
			if h < best {
				best, bestK = h, kk
			}
		}
		fmt.Fprintf(&cost, "| %.1f | %d | %s |\n", ratio, k, strings.Join(hours, ", "))
		if k <= 4 && bestK != k {
			t.Errorf("σR/σL %.1f: k* %d, but k = %d reaches the MDE soonest", ratio, k, bestK)
		}
	}
	t.Logf("the size of both analyses (%d campaigns of %d rounds, σL %.1f%%, σe %.1f%%):\n%s", campaigns, n, 100*sdL, 100*sdE, size.String())
	t.Logf("the night (load %.0f min, sweep %.0f, resume %.0f):\n%s", load, sweep, resume, cost.String())
}
