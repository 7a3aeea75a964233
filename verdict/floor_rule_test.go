package verdict

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// pairLevel names one comparison's cell: scenarios a and b (in the run's
// order) at level c.
type pairLevel struct {
	a, b string
	c    measure.Level
}

// trueRoundVar is the variance of one round's paired log difference for
// every pair of scenarios at every level, pooled about each campaign's own
// level mean over the campaigns in: with tens of campaigns, hundreds of
// df a cell, the truth as far as the rule's own estimate can know it. It
// takes in everything a round's difference carries on the generator: the
// launches' effects, the drift, the requests' sampling noise.
func trueRoundVar(t *testing.T, ins []records.Input) trueNoise {
	t.Helper()
	// Each campaign's round differences of a pair at a level are one row,
	// built as the rule builds them (comparePaired); rule.PooledVar pools
	// the rows about their own means.
	rows := map[pairLevel][][]float64{}
	for _, in := range ins {
		v := mustVerdict(t, in, Options{})
		for i := range v.Scenarios {
			for j := i + 1; j < len(v.Scenarios); j++ {
				a, b := &v.Scenarios[i], &v.Scenarios[j]
				for _, p := range commonLevels(a.Levels, b.Levels) {
					rounds := roundIndex([]Level{*p.a, *p.b})
					ra, rb := launchRow(p.a, rounds), launchRow(p.b, rounds)
					d := make([]float64, len(ra))
					for k := range d {
						d[k] = rb[k] - ra[k] // NaN unless both launched in that round
					}
					key := pairLevel{a.Name, b.Name, p.c}
					rows[key] = append(rows[key], d)
				}
			}
		}
	}
	truth := map[pairLevel]float64{}
	for k, x := range rows {
		truth[k] = rule.PooledVar(x).Var
	}
	return func(a, b string, c measure.Level) (float64, bool) {
		v, ok := truth[pairLevel{a, b, c}]
		return v, ok
	}
}

// minFloorCampaigns is the fewest campaigns whose launches
// TestSeedsShapedRuleFloor holds to the 1.15 target: over two, the rule's
// launches swing by a fifth of the truth's.
const minFloorCampaigns = 20

// floorCampaigns is how many campaigns TestSeedsShapedRuleFloor judges per
// figure: BAKEOFF_FLOOR_CAMPAIGNS, else n.
func floorCampaigns(n int) int {
	if k, err := strconv.Atoi(os.Getenv("BAKEOFF_FLOOR_CAMPAIGNS")); err == nil && k > 0 {
		return k
	}
	return n
}

// TestSeedsShapedRuleFloor measures the floor issue's benchmark is held to
// as it defines it, "the rule given the true variance", on the very
// campaigns the rule is judged on (docs/METHOD.md, "The floor of the
// four-scenario campaign"): the seeds-shaped campaign of four scenarios
// (the baseline, EAGLE-3 topk=4, a +0.1% flag and an A/A twin) on the
// repository's generator, judged by DecideRun three ways: as shipped, with
// a matching noise profile, and with every launch-paired comparison's
// variance replaced by the truth (trueNoise: its df infinite, no serial
// widening). The spending, the family, the looks and the levels' own
// means are the rule's in all three, so the ratio is what not knowing the
// variance costs. The truth is learned on campaigns of their own.
//
// A measurement of a few minutes: make sequential runs it on 40 campaigns
// (BAKEOFF_FLOOR_CAMPAIGNS=N), with BAKEOFF_PRIOR_LAUNCH_SIGMA and the
// other variables of priorHost for a noisier host; make test checks the
// oracle itself (TestTrueNoiseReplacesEstimate). Over minFloorCampaigns
// or more, it fails when the rule takes more than 1.15 times the launches of the rule given the true
// variance, or fewer than 0.97 times (a rule that beats its own
// known-variance self stops on luck), or when the oracle names the A/A
// twin different in more than a tenth of campaigns.
func TestSeedsShapedRuleFloor(t *testing.T) {
	n := floorCampaigns(0)
	if n == 0 {
		t.Skip("a measurement: BAKEOFF_FLOOR_CAMPAIGNS=N runs it on N campaigns (make sequential)")
	}
	syntheticCampaigns(t)
	base := priorHost(realBaseline)
	eagle := priorHost(verdicttest.RealisticNoise(verdicttest.Eagle3TopK4))
	flag := base
	flag.Slowdown = 1 / 1.001
	engines := []verdicttest.Engine{base, eagle, flag, base}
	names := []string{"baseline", "variant", "flag", "twin"}

	var learn []records.Input
	for seed := range uint64(max(4, n)) {
		learn = append(learn, seqInputMax(engines, names, 20, 47000+seed))
	}
	known := trueRoundVar(t, learn)
	tv, _ := known("baseline", "flag", measure.Level{Concurrency: 1})
	te, _ := known("baseline", "variant", measure.Level{Concurrency: 1})
	t.Logf("true round sd at C=1: the flag %.2f%%, EAGLE-3 %.2f%%", 100*math.Sqrt(tv), 100*math.Sqrt(te))
	prior := learnedPrior(t, 20)

	var b strings.Builder
	b.WriteString("| max | the rule | with a matching profile | the rule given the true variance | ratio | fully decided: rule, profile, truth |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, maxRounds := range []int{12, 20} {
		plan := SequentialPlan{MinRounds: 3, MaxRounds: maxRounds}
		type tally struct {
			launches, fully, wrong int
		}
		var got [3]tally
		for seed := range uint64(n) {
			in := seqInputMax(engines, names, maxRounds, 48000+seed)
			for i, o := range []Options{
				{Sequential: &plan},
				{Sequential: &plan, Prior: prior},
				{Sequential: &plan, truth: known},
			} {
				v := mustVerdict(t, in, o)
				l, fully := campaignLaunches(v)
				got[i].launches += l
				if fully {
					got[i].fully++
				}
				for _, c := range againstBaseline(v, "twin") {
					if c.Outcome == OutcomeFaster || c.Outcome == OutcomeSlower {
						got[i].wrong++ // a campaign that names the twin different
						break
					}
				}
			}
		}
		per := func(x int) float64 { return float64(x) / float64(n) }
		fmt.Fprintf(&b, "| %d | %.1f | %.1f | %.1f | %.2f× | %d, %d, %d of %d |\n", maxRounds,
			per(got[0].launches), per(got[1].launches), per(got[2].launches),
			float64(got[0].launches)/float64(got[2].launches),
			got[0].fully, got[1].fully, got[2].fully, n)
		if got[2].wrong > max(1, n/10) {
			t.Errorf("max %d: the rule given the true variance called the A/A twin different in %d of %d campaigns", maxRounds, got[2].wrong, n)
		}
		// The ±15% bound is for a mean over tens of campaigns; over a few
		// the table is a look, not a measurement.
		if r := float64(got[0].launches) / float64(got[2].launches); n >= minFloorCampaigns && (r > 1.15 || r < 0.97) {
			t.Errorf("max %d: the rule took %.2f times the launches of the rule given the true variance, want 0.97 to 1.15", maxRounds, r)
		}
	}
	t.Logf("launches a campaign of four scenarios over %d campaigns each:\n%s", n, b.String())
}

// campaignLaunches is a sequential campaign's launches to its verdict: each
// variant's until it stopped, the baseline's while any ran; and whether
// every comparison with the baseline was decided.
func campaignLaunches(v *Verdict) (int, bool) {
	sum, base, fully := 0, 0, true
	for _, vs := range v.Sequential.Variants {
		sum += vs.Rounds
		base = max(base, vs.Rounds)
		fully = fully && vs.Decided >= vs.Comparisons
	}
	return sum + base, fully
}

// TestTrueNoiseReplacesEstimate: the floor's oracle puts the variance it is
// given, with unlimited df and no widening, in place of every
// launch-paired comparison's estimate, and leaves the means alone; a pair
// it does not know keeps the rule's own estimate.
func TestTrueNoiseReplacesEstimate(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 10}
	names := []string{"baseline", "same"}
	in := verdicttest.CampaignInput(names, s, 4, verdicttest.Campaign([]verdicttest.Engine{realBaseline, realBaseline}, s, 4, 5))
	const sd = 0.03
	known := func(a, b string, c measure.Level) (float64, bool) {
		return sd * sd, a == "baseline" && b == "same" && c.Concurrency == 1
	}
	plain := mustVerdict(t, in, Options{})
	told := mustVerdict(t, in, Options{truth: known})
	for _, c := range []int{1, 10} {
		l := measure.ConcurrencyLevel(c)
		p, k := plain.Cell(l, "same"), told.Cell(l, "same")
		if p.DeltaPct != k.DeltaPct {
			t.Errorf("C=%d: the oracle moved the mean: %.4f%% against %.4f%%", c, k.DeltaPct, p.DeltaPct)
		}
		if c == 10 {
			if k.DF != p.DF || k.RoundSDPct != p.RoundSDPct {
				t.Errorf("C=10, not known: df %.1f, round sd %.3f%%, want the rule's %.1f and %.3f%%", k.DF, k.RoundSDPct, p.DF, p.RoundSDPct)
			}
			continue
		}
		if k.DF != trueDF || math.Abs(k.RoundSDPct-100*math.Expm1(sd)) > 1e-9 || k.serial != 0 {
			t.Errorf("C=1: df %.0f, round sd %.4f%%, serial %.2f; want %.0f, %.4f%%, none", k.DF, k.RoundSDPct, k.serial, trueDF, 100*math.Expm1(sd))
		}
		if want := sd / math.Sqrt(float64(k.Rounds)); math.Abs(k.est.SE-want) > 1e-12 {
			t.Errorf("C=1: SE %.5f, want %.5f over %d rounds", k.est.SE, want, k.Rounds)
		}
	}
}
