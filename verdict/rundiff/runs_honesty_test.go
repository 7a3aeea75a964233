package rundiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// The run effect of the honesty tests: each run draws one log-normal speed
// factor with this sd shared by all its launches, as a night's host state
// (load, clocks, thermal state) is; 3% is the size of the false
// regressions two identical demo runs showed on a busy 2-core machine
// (−4.7% to −11%).
const honestyRunSigma = 0.03

// night is one run of the honesty campaign: a baseline and a speculative
// variant with 1% launch noise, the whole run slowed by factor (its run
// effect), the variant further by specSlow and the baseline by baseSlow.
type night struct {
	factor, specSlow, baseSlow float64
}

// writeNight writes a night as run dir/name, its noise drawn from seed.
func writeNight(t *testing.T, dir, name string, n night, seed uint64) *results.Run {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 10, 70}
	s.Requests = 40
	base := verdicttest.Baseline
	base.LaunchSigma = 0.01
	spec := verdicttest.Eagle3TopK4
	spec.LaunchSigma = 0.01
	base.Slowdown = n.factor * max(n.baseSlow, 1)
	spec.Slowdown = n.factor * max(n.specSlow, 1)
	run, err := verdicttest.WriteCampaign(filepath.Join(dir, name), []string{"baseline", "spec"},
		[]verdicttest.Engine{base, spec}, s, verdict.DefaultRounds, seed, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// runFactor draws a night's run effect.
func runFactor(r *rand.Rand, sigma float64) float64 { return math.Exp(sigma * r.NormFloat64()) }

// honestyPairs diffs pairs of nights, new against old, each pair with
// history nights of its own before it (their dirs share a root, as a
// campaign's runs do), and counts the diffs that regressed, and those the
// old rule (absolute rows judged with the launches' variance alone) would
// have called regressed.
func honestyPairs(t *testing.T, pairs, history int, seed uint64, newNight func(r *rand.Rand) night) (regressed, legacy int, last *Result) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	for p := range pairs {
		dir := t.TempDir()
		var hist []*results.Run
		for h := range history {
			hist = append(hist, writeNight(t, dir, fmt.Sprintf("h%d", h), night{factor: runFactor(r, honestyRunSigma)}, seed*1000+uint64(p*50+h)))
		}
		old := writeNight(t, dir, "old", night{factor: runFactor(r, honestyRunSigma)}, seed*1000+uint64(p*50+40))
		hist = append(hist, old)
		n := newNight(r)
		n.factor *= runFactor(r, honestyRunSigma)
		new := writeNight(t, dir, "new", n, seed*1000+uint64(p*50+41))
		d, err := Compare(old, new, Options{History: hist})
		if err != nil {
			t.Fatal(err)
		}
		if d.Regressed() {
			regressed++
		}
		l, err := Compare(old, new, Options{WithinRunOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if l.Regressed() {
			legacy++
		}
		last = d
	}
	return regressed, legacy, last
}

// honestyPairsCount is the pairs of nights each honesty test diffs: 20 in
// make test, where the 5% bound allows 1 and the within-run rule (about a
// fifth) exceeds it; BAKEOFF_DIFF_PAIRS=40 gives the figures of
// docs/METHOD.md ("Two runs").
var honestyPairsCount = func() int {
	if n, err := strconv.Atoi(os.Getenv("BAKEOFF_DIFF_PAIRS")); err == nil && n > 0 {
		return n
	}
	return 20
}()

// TestDiffAAHonesty: two runs of the same code, each night with its own
// run effect (3% sd), diff as REGRESSED in at most 5% of 40 pairs, with
// the run effect learned from three runs of history and with no history
// (where only the ratios to the baseline are judged). The rule before the
// run was a unit (absolute rows judged with the launches' variance alone)
// fails the same pairs: it must call more than 5%, or the test shows
// nothing.
func TestDiffAAHonesty(t *testing.T) {
	same := func(*rand.Rand) night { return night{factor: 1} }
	for _, tc := range []struct {
		name    string
		history int
		seed    uint64
	}{{"three runs of history", 3, 11}, {"no history", 0, 12}} {
		t.Run(tc.name, func(t *testing.T) {
			reg, legacy, d := honestyPairs(t, honestyPairsCount, tc.history, tc.seed, same)
			t.Logf("regressed %d of %d; the within-run rule %d; last run effect %.1f%% from %d runs",
				reg, honestyPairsCount, legacy, d.RunEffect.SDPct, len(d.RunEffect.Runs))
			if reg > honestyPairsCount/20 {
				t.Errorf("identical code regressed in %d of %d pairs, want at most %d (5%%)", reg, honestyPairsCount, honestyPairsCount/20)
			}
			if legacy <= honestyPairsCount/20 {
				t.Errorf("the within-run rule regressed in only %d of %d pairs: the run effect is too small to show anything", legacy, honestyPairsCount)
			}
		})
	}
}

// TestDiffPower: a variant truly 5% slower in the new run (a planted
// regression, each night with its own run effect) is caught, by its ratio
// to its own run's baseline, in at least 80% of 40 pairs at the shipped
// default rounds, with no history.
func TestDiffPower(t *testing.T) {
	slow := func(*rand.Rand) night { return night{factor: 1, specSlow: 1.05} }
	reg, _, _ := honestyPairs(t, honestyPairsCount, 0, 13, slow)
	t.Logf("caught %d of %d", reg, honestyPairsCount)
	if reg < honestyPairsCount*8/10 {
		t.Errorf("a 5%% regression caught in %d of %d pairs, want at least %d (80%%)", reg, honestyPairsCount, honestyPairsCount*8/10)
	}
}

// TestDiffBaselineWithoutHistory: the baseline itself 5% slower (an engine
// upgrade that slowed everything) cannot be told from a night's luck
// without history: the absolute rows are shown, unjudged, and nothing is
// called regressed by them; with history the run effect judges them.
func TestDiffBaselineWithoutHistory(t *testing.T) {
	dir := t.TempDir()
	old := writeNight(t, dir, "old", night{factor: 1}, 21)
	new := writeNight(t, dir, "new", night{factor: 1, baseSlow: 1.05, specSlow: 1.05}, 22)
	d, err := Compare(old, new, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.RunEffect.Enough() || d.Regressed() {
		t.Fatalf("no history: run effect %+v, regressed %v", d.RunEffect, d.Regressed())
	}
	for _, r := range d.Rows {
		if !r.Unjudged || r.Regression || r.DeltaPct > -2 {
			t.Errorf("%s %v: unjudged %v, regression %v, %+.1f%%; want unjudged, about −5%%", r.Scenario, r.Level, r.Unjudged, r.Regression, r.DeltaPct)
		}
	}
	for _, r := range d.Ratios {
		if r.Regression {
			t.Errorf("%s vs baseline %v: a regression of the ratio, which did not change", r.Variant, r.Level)
		}
	}
	if got := d.Comparisons(); got != len(d.Ratios) {
		t.Errorf("%d comparisons judged, want the %d ratios alone", got, len(d.Ratios))
	}
}

// TestRunEffectLearned: the run effect learned from 8 nights of a 3% run
// effect is of that size, not of the launches' 1% (which the within-run
// variance is taken off), and none with no run effect.
func TestRunEffectLearned(t *testing.T) {
	for _, tc := range []struct {
		sigma    float64
		min, max float64 // the sd's bounds, percent
	}{{0.03, 1.5, 5.5}, {0, 0, 1.2}} {
		r := rand.New(rand.NewPCG(31, uint64(100*tc.sigma)))
		dir := t.TempDir()
		var hist []*results.Run
		for h := range 8 {
			hist = append(hist, writeNight(t, dir, fmt.Sprintf("h%d", h), night{factor: runFactor(r, tc.sigma)}, uint64(300+h)))
		}
		d, err := Compare(hist[6], hist[7], Options{History: hist[:7]})
		if err != nil {
			t.Fatal(err)
		}
		e := d.RunEffect
		if !e.Enough() || e.DF != 6 || e.SDPct < tc.min || e.SDPct > tc.max {
			t.Errorf("run sd %.0f%%: learned %+v, want %.1f%% to %.1f%% with 6 df", 100*tc.sigma, e, tc.min, tc.max)
		}
	}
}

// TestDiffOtherCampaign: runs of two campaigns are refused, naming both,
// unless forced.
func TestDiffOtherCampaign(t *testing.T) {
	dir := t.TempDir()
	old := writeNight(t, dir, "old", night{factor: 1}, 51)
	new := writeNight(t, dir, "new", night{factor: 1}, 52)
	new.Manifest.Campaign = "another"
	_, err := Compare(old, new, Options{})
	if err == nil || !strings.Contains(err.Error(), `is a run of campaign "baseline" and `) || !strings.Contains(err.Error(), `of "another"`) {
		t.Fatalf("error %v, want both campaigns named", err)
	}
	if _, err := Compare(old, new, Options{Force: true}); err != nil {
		t.Errorf("forced: %v", err)
	}
}
