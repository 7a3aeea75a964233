package contention

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// injectEnv injects a bias into the short test: the twin's server runs
// that many times slower (e.g. 1.1), and the test must then fail.
const injectEnv = "BAKEOFF_CONTENTION_INJECT"

// shortShape is make test's campaign: the three scenarios, four rounds,
// levels of 4 and 16 requests at once, 32 tokens each, at 2×. At 2× a
// request takes hundreds of milliseconds and several are in flight, so the
// load generator's late wake-ups on a busy machine (tens of milliseconds
// with a long run queue) take little of a level's throughput; what a
// starved moment still does to one level (a fifth of it, now and then, on
// a machine with a load average of 30) the other level dilutes. Every
// launch pays the lifecycle's steps, which on a loaded machine take far
// longer than its sweep: two levels and four rounds are what the test's
// length allows.
var shortShape = shape{speed: 2, loadTime: "200ms", levels: []int{4, 16}, maxTokens: 32, rounds: 4}

// The short test's two checks share its 1% chance of failing a correct
// rule: half for the verdict's calls, half for the two variants' biases.
const (
	shortCallAlpha = 0.005
	shortBiasAlpha = 0.0025
)

// shortKind is the short test's contention: one core kept busy, or, where
// the machine's own load already fills its cores (make test runs the test
// beside the rest of the suite), the machine as it is. A busy loop there
// adds no contention the campaign does not already meet, only a core's
// worth of CPU that the suite's other tests wait for.
func shortKind() (Kind, string) {
	load, cpus := loadAverage(), runtime.NumCPU()
	if load >= float64(cpus) {
		return None, fmt.Sprintf("the machine's load %.1f already fills its %d CPUs", load, cpus)
	}
	return Busy, fmt.Sprintf("load %.1f on %d CPUs: one core kept busy", load, cpus)
}

// TestContentionShort runs one A/A campaign of the demo's scenarios while
// one core is kept busy (or while the machine's own load fills its cores:
// shortKind), and fails when identical servers are told apart:
// when the verdict, judged at α = 0.005, calls a difference (a correct
// rule does in at most 0.5% of campaigns, Holm's correction bounding the
// family), or when a variant's rounds lean one way, the paired t-test of
// their differences at p < 0.0025 each. A correct rule and
// measurement fail it at most once in a hundred runs. BAKEOFF_CONTENTION_INJECT=1.1
// slows the twin by a tenth, which both checks catch (at two levels, a
// load average of 30: the twin called slower at p_adj = 0.003, its rounds
// at t = −16.9).
func TestContentionShort(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole campaign: not in -short")
	}
	s := shortShape
	if v := os.Getenv(injectEnv); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 {
			t.Fatalf("%s=%q: want a slowdown of at least 1", injectEnv, v)
		}
		s.twinSlowdown = f
	}
	dir := t.TempDir()
	k, why := shortKind()
	t.Logf("contention: %s (%s)", k, why)
	underLoad(t, dir, s, k, []int{0})
	c, err := readCampaign(campaignDir(dir, k, 0), verdict.Options{Alpha: shortCallAlpha})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(c.summary())
	for _, call := range c.calls {
		t.Errorf("identical servers called different at α = %g: %s", shortCallAlpha, call)
	}
	for _, name := range variants {
		sum, n := map[int]float64{}, map[int]int{}
		for _, r := range c.rounds {
			if r.variant == name {
				sum[r.round] += r.logPct
				n[r.round]++
			}
		}
		var means []string
		var xs []float64
		for r := 1; r <= s.rounds; r++ {
			if n[r] > 0 {
				xs = append(xs, sum[r]/float64(n[r]))
				means = append(means, strconv.FormatFloat(sum[r]/float64(n[r]), 'f', 2, 64))
			}
		}
		tt, p := TTest(xs)
		t.Logf("%s: rounds' mean log ratios %s%%: t = %.2f, p = %.4f", name, strings.Join(means, ", "), tt, p)
		if p < shortBiasAlpha {
			t.Errorf("%s leans one way over the rounds: t = %.2f, p = %.4f, want p ≥ %g", name, tt, p, shortBiasAlpha)
		}
	}
}
