package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// Honesty of the sequential rule on synthetic campaigns: the engines and
// noise of honesty_test.go (1% launch noise, 1% drift, the seeds' eight
// levels), run for the plan's maximum rounds and judged by replaying the
// looks, as a campaign that stopped each variant when the rule said so would
// have been judged (a stopped variant's later launches are never looked
// at). Each bound is one a broken rule fails: the naive rule (stop at the
// first round where the fixed design names a winner) fails the A/A bound
// and the coverage bound, and a plan that gives up at its first look fails
// the power bound. BAKEOFF_SEQUENTIAL_CAMPAIGNS=N runs N campaigns per
// figure instead (docs/METHOD.md gives the figures of a long run).

// seqPlan is the plan the tests judge: looks after rounds 3 to 12.
var seqPlan = SequentialPlan{MinRounds: 3, MaxRounds: 12}

// seqCampaigns is how many campaigns a figure is measured on: n, or
// BAKEOFF_SEQUENTIAL_CAMPAIGNS when set.
func seqCampaigns(n int) int {
	if k, err := strconv.Atoi(os.Getenv("BAKEOFF_SEQUENTIAL_CAMPAIGNS")); err == nil && k > 0 {
		return k
	}
	return n
}

// seqInput is one simulated campaign of plan.MaxRounds rounds.
func seqInput(engines []verdicttest.Engine, names []string, seed uint64) records.Input {
	s := honestySweep()
	ls := verdicttest.Campaign(engines, s, seqPlan.MaxRounds, seed)
	return verdicttest.CampaignInput(names, s, seqPlan.MaxRounds, ls)
}

func mustVerdict(t *testing.T, in records.Input, o Options) *Verdict {
	t.Helper()
	v, err := DecideRun(in, o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// naiveLooks judges a campaign by the naive rule: after each round from the
// plan's minimum, the fixed design's verdict on the rounds so far (Holm over
// the family, or no correction with raw set); the first look where a
// comparison with the baseline is significant stops it. It returns, per
// level of the variant, the comparison at which it stopped, or the last.
func naiveLooks(v *Verdict, variant string, raw bool) map[measure.Level]Comparison {
	base, vi := v.baselineIndex(), v.scenarioIndex(variant)
	out := map[measure.Level]Comparison{}
	stopped := map[measure.Level]bool{}
	for _, k := range campaignRounds(v) {
		if k < seqPlan.MinRounds || k > seqPlan.MaxRounds {
			continue
		}
		pairs, keys, _ := comparePairs(v, k)
		var fam []*Comparison
		for _, key := range keys {
			fam = append(fam, pairs[key])
		}
		corr := v.Correction
		if raw {
			corr = rule.CorrectionNone
		}
		decide(fam, fixedRule{Alpha: v.Alpha, Confidence: v.Confidence, Correction: corr,
			EquivalenceMarginPct: v.EquivalenceMarginPct})
		for key, c := range pairs {
			if stopped[key.c] || !((key.i == base && key.j == vi) || (key.j == base && key.i == vi)) {
				continue
			}
			cc := *c
			if key.i == vi {
				cc = c.flip()
			}
			out[key.c] = cc
			if cc.Significant {
				stopped[key.c] = true
			}
		}
	}
	return out
}

// seqTally counts, over campaigns, a variant's comparisons with the
// baseline under one rule.
type seqTally struct {
	campaigns, comparisons   int
	faster, slower, ties     int
	winnerCampaigns, covered int
	judged                   int // comparisons with a known truth
}

func (st *seqTally) add(cs map[measure.Level]Comparison, truth map[measure.Level]float64) {
	st.campaigns++
	named := false
	for c, cmp := range cs {
		st.comparisons++
		switch cmp.Outcome {
		case OutcomeFaster:
			st.faster++
			named = true
		case OutcomeSlower:
			st.slower++
			named = true
		case OutcomeTie:
			st.ties++
		}
		if cmp.Significant && cmp.Outcome != OutcomeTie {
			named = true
		}
		if r, ok := truth[c]; ok {
			st.judged++
			if cmp.SpeedupLo <= r && r <= cmp.SpeedupHi {
				st.covered++
			}
		}
	}
	if named {
		st.winnerCampaigns++
	}
}

func (st seqTally) winnerRate() float64 {
	return float64(st.winnerCampaigns) / float64(max(st.campaigns, 1))
}

func (st seqTally) coverage() float64 { return float64(st.covered) / float64(max(st.judged, 1)) }

func (st seqTally) String() string {
	out := fmt.Sprintf("%d campaigns, %d comparisons: faster %d, slower %d, tie %d; a winner in %d campaigns (%.1f%%)",
		st.campaigns, st.comparisons, st.faster, st.slower, st.ties, st.winnerCampaigns, 100*st.winnerRate())
	if st.judged > 0 {
		out += fmt.Sprintf("; interval holds the truth at %d of %d (%.1f%%)", st.covered, st.judged, 100*st.coverage())
	}
	return out
}

// againstBaseline is the variant's comparisons with the baseline, by level.
func againstBaseline(v *Verdict, variant string) map[measure.Level]Comparison {
	out := map[measure.Level]Comparison{}
	for _, row := range v.Rows {
		if c := v.Cell(row.Level, variant); c != nil && c.Compared {
			out[row.Level] = c.Comparison
		}
	}
	return out
}

// TestSequentialAA: the baseline against itself under optional stopping, a
// look after every round from 3 to 12: a winner in no more than 5% of
// campaigns. The naive rule on the same campaigns must exceed 5%.
func TestSequentialAA(t *testing.T) {
	syntheticCampaigns(t)
	n := seqCampaigns(40)
	var seq, naive, naiveRaw seqTally
	for seed := range uint64(n) {
		in := seqInput([]verdicttest.Engine{realBaseline, realBaseline}, []string{"baseline", "variant"}, 20000+seed)
		v := mustVerdict(t, in, Options{Sequential: &seqPlan})
		seq.add(againstBaseline(v, "variant"), nil)
		naive.add(naiveLooks(v, "variant", false), nil)
		naiveRaw.add(naiveLooks(v, "variant", true), nil)
	}
	t.Logf("A/A, sequential %d..%d: %s", seqPlan.MinRounds, seqPlan.MaxRounds, seq)
	t.Logf("A/A, naive rule (the fixed design's Holm-corrected test at every look): %s", naive)
	t.Logf("A/A, naive rule (raw p < 0.05 at every look): %s", naiveRaw)
	if seq.winnerRate() > 0.05 {
		t.Errorf("the sequential rule names a winner in %.1f%% of A/A campaigns, want ≤ 5%%", 100*seq.winnerRate())
	}
	if naiveRaw.winnerRate() <= 0.05 {
		t.Errorf("the naive rule names a winner in %.1f%% of A/A campaigns: the bound has no teeth", 100*naiveRaw.winnerRate())
	}
}

// fixedAtStop is, per level, the fixed design's comparison of the variant
// with the baseline on the rounds the sequential rule stopped after: its
// ordinary 95% interval there, which the repeated interval replaces.
func fixedAtStop(v *Verdict, variant string) map[measure.Level]Comparison {
	base, vi := v.baselineIndex(), v.scenarioIndex(variant)
	out := map[measure.Level]Comparison{}
	for c, cmp := range againstBaseline(v, variant) {
		k := cmp.DecidedAtRound
		if k == 0 {
			k = seqPlan.MaxRounds
		}
		pairs, _, _ := comparePairs(v, k)
		if base < vi {
			if p, ok := pairs[pairKey{base, vi, c}]; ok {
				out[c] = *p
			}
		} else if p, ok := pairs[pairKey{vi, base, c}]; ok {
			out[c] = p.flip()
		}
	}
	return out
}

// TestSequentialCoverage: the interval each comparison reports after the
// rule stopped it (the repeated confidence interval at its closing look)
// holds the true ratio at 90% or more of comparisons, for the same engine
// (A/A), a like one (the baseline 5% slower) and an unlike one (EAGLE-3
// topk=4). The naive rule's intervals (the fixed design's, at the round it
// stopped) must fall short in the A/A campaigns, where stopping at the
// first interval that excludes no difference selects exactly the misses.
func TestSequentialCoverage(t *testing.T) {
	syntheticCampaigns(t)
	n := seqCampaigns(20)
	slow := realBaseline
	slow.Slowdown = 1.05
	for _, tc := range []struct {
		name    string
		variant verdicttest.Engine
		teeth   bool
	}{
		{name: "same", variant: realBaseline, teeth: true},
		{name: "like", variant: slow},
		{name: "unlike", variant: verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			truth := trueRatios(realBaseline, tc.variant)
			if tc.variant == realBaseline {
				for c := range truth {
					truth[c] = 1
				}
			}
			var seq, fixed, naive seqTally
			for seed := range uint64(n) {
				in := seqInput([]verdicttest.Engine{realBaseline, tc.variant}, []string{"baseline", "variant"}, 21000+seed)
				v := mustVerdict(t, in, Options{Sequential: &seqPlan})
				seq.add(againstBaseline(v, "variant"), truth)
				fixed.add(fixedAtStop(v, "variant"), truth)
				naive.add(naiveLooks(v, "variant", true), truth)
			}
			t.Logf("coverage, %s, repeated interval at the stop: %s", tc.name, seq)
			t.Logf("coverage, %s, fixed interval at the same stop: %s", tc.name, fixed)
			t.Logf("coverage, %s, naive rule (raw p < 0.05), fixed interval at its stop: %s", tc.name, naive)
			if seq.coverage() < 0.90 {
				t.Errorf("the repeated interval holds the truth at %.1f%% of comparisons, want ≥ 90%%", 100*seq.coverage())
			}
			if tc.teeth && naive.coverage() >= 0.90 {
				t.Errorf("the naive rule's interval holds the truth at %.1f%%: the bound has no teeth", 100*naive.coverage())
			}
		})
	}
}

// TestSequentialPower: a variant truly 5% slower is found slower by the end
// of the sequential plan at no fewer levels than the fixed design of the
// plan's maximum rounds finds it, less one point, on the same campaigns;
// never faster. A plan that gives up at its first look (3..3) must fall
// short.
func TestSequentialPower(t *testing.T) {
	syntheticCampaigns(t)
	n := seqCampaigns(15)
	slow := realBaseline
	slow.Slowdown = 1.05
	var seq, fixed, early seqTally
	var stopRounds, stopped int
	for seed := range uint64(n) {
		in := seqInput([]verdicttest.Engine{realBaseline, slow}, []string{"baseline", "variant"}, 22000+seed)
		v := mustVerdict(t, in, Options{Sequential: &seqPlan})
		seq.add(againstBaseline(v, "variant"), nil)
		if vs := v.Sequential.Variants[0]; vs.Stopped {
			stopRounds += vs.StoppedAfter
			stopped++
		}
		fixed.add(againstBaseline(mustVerdict(t, in, Options{}), "variant"), nil)
		early.add(againstBaseline(mustVerdict(t, in, Options{Sequential: &SequentialPlan{MinRounds: 3, MaxRounds: 3}}), "variant"), nil)
	}
	rate := func(st seqTally) float64 { return float64(st.slower) / float64(max(st.comparisons, 1)) }
	t.Logf("power, 5%% slower, sequential %d..%d: %s; found slower at %.1f%%; stopped after %.1f rounds on average (%d of %d campaigns)",
		seqPlan.MinRounds, seqPlan.MaxRounds, seq, 100*rate(seq), float64(stopRounds)/float64(max(stopped, 1)), stopped, n)
	t.Logf("power, 5%% slower, fixed %d rounds: %s; found slower at %.1f%%", seqPlan.MaxRounds, fixed, 100*rate(fixed))
	t.Logf("power, 5%% slower, a plan that gives up at round 3: found slower at %.1f%%", 100*rate(early))
	if rate(seq) < rate(fixed)-0.01 {
		t.Errorf("found slower at %.1f%% of levels, the fixed design at %.1f%%: more than a point lost", 100*rate(seq), 100*rate(fixed))
	}
	if seq.faster > 0 {
		t.Errorf("the slower variant was called faster at %d levels", seq.faster)
	}
	if rate(early) >= rate(fixed)-0.01 {
		t.Errorf("a plan that gives up at round 3 finds it at %.1f%%: the bound has no teeth", 100*rate(early))
	}
}

// seedsShaped is a campaign shaped like the seeds': the baseline, EAGLE-3
// topk=4 (+4% at C=1, −54% and more under load) and a flag worth +0.1%,
// the seeds' eight levels.
func seedsShaped() ([]verdicttest.Engine, []string) {
	flag := realBaseline
	flag.Slowdown = 1 / 1.001
	return []verdicttest.Engine{realBaseline, verdicttest.RealisticNoise(verdicttest.Eagle3TopK4), flag},
		[]string{"baseline", "eagle3-topk4", "flag"}
}

// TestSequentialSavings: on seeds-shaped campaigns, the launches the
// sequential plan takes (a variant's until it stops, the baseline's until
// the last variant stops) against the fixed design of the plan's maximum,
// with the error rates intact: no comparison decided against the truth's
// sign (EAGLE-3 faster only at C=1, the flag never slower), and EAGLE-3
// found slower under load (C ≥ 2, 14% and more) in every campaign. The
// savings are logged beside what a rule that knew the noise would save, and
// must not exceed it. At this maximum the flag, a tie that takes most of
// the plan to show, keeps them under 40% for any rule that must estimate
// the noise (METHOD.md says why); TestSequentialSavingsByMax checks the
// goal where the plan's maximum leaves room for it.
func TestSequentialSavings(t *testing.T) {
	syntheticCampaigns(t)
	n := seqCampaigns(8)
	engines, names := seedsShaped()
	var st savingsTally
	var wrong, eagleLoadFound, eagleLoad int
	var vs []*Verdict
	for seed := range uint64(n) {
		v := mustVerdict(t, seqInput(engines, names, 23000+seed), Options{Sequential: &seqPlan})
		vs = append(vs, v)
		st.add(v)
		for c, cmp := range againstBaseline(v, "eagle3-topk4") {
			if c.Concurrency > 1 {
				eagleLoad++
				if cmp.Outcome == OutcomeSlower {
					eagleLoadFound++
				}
			}
			if (c.Concurrency == 1 && cmp.Outcome == OutcomeSlower) || (c.Concurrency > 1 && cmp.Outcome == OutcomeFaster) {
				wrong++
				t.Logf("seed %d: EAGLE-3 called %s at %s", seed, cmp.Outcome, c)
			}
		}
		for c, cmp := range againstBaseline(v, "flag") {
			if cmp.Outcome == OutcomeSlower {
				wrong++
				t.Logf("seed %d: the flag called slower at %s", seed, c)
			}
		}
		t.Logf("seed %d: %s", seed, Cost(v, nil).Sentence)
	}
	saved := st.saved()
	t.Logf("seeds-shaped, sequential %d..%d, %d campaigns: %s; %d decisions against the truth",
		seqPlan.MinRounds, seqPlan.MaxRounds, n, st, wrong)
	// What a rule could save if it knew the noise: the bound the 40% goal
	// is measured against (docs/METHOD.md). A valid rule that must estimate
	// the noise cannot save more; one that does is stopping on luck.
	b := savingsBound(vs)
	t.Logf("known noise (round sd %.2f%% for the flag, %.2f%% for EAGLE-3 at C=1, where it is %+.1f%%; one level each): the flag %.1f rounds, EAGLE-3 %.1f, %.1f%% fewer launches by the same spending; %.1f%% by linear spending",
		b.flagSD, b.eagleSD, b.eaglePct, b.obf.flag, b.obf.eagle, 100*b.obf.saved, 100*b.linear.saved)
	if saved > b.obf.saved {
		t.Errorf("the rule saves %.1f%%, more than one that knows the noise (%.1f%%): it stops on luck", 100*saved, 100*b.obf.saved)
	}
	if wrong > 0 {
		t.Errorf("%d comparisons decided against the truth's sign", wrong)
	}
	if eagleLoadFound < eagleLoad {
		t.Errorf("EAGLE-3 found slower under load at %d of %d levels, want every one", eagleLoadFound, eagleLoad)
	}
}

// savingsTally adds up, over seeds-shaped campaigns, the launches the
// sequential plan took against the fixed design's and the rounds EAGLE-3
// and the flag ran.
type savingsTally struct {
	campaigns, used, fixed, eagleRounds, flagRounds int
}

func (st *savingsTally) add(v *Verdict) {
	st.campaigns++
	cost := Cost(v, nil)
	st.used += cost.Launches
	st.fixed += cost.FixedLaunches
	for _, vs := range v.Sequential.Variants {
		switch vs.Variant {
		case "eagle3-topk4":
			st.eagleRounds += vs.Rounds
		case "flag":
			st.flagRounds += vs.Rounds
		}
	}
}

// saved is the fraction of the fixed design's launches not taken.
func (st savingsTally) saved() float64 { return 1 - float64(st.used)/float64(max(st.fixed, 1)) }

func (st savingsTally) String() string {
	n := float64(max(st.campaigns, 1))
	return fmt.Sprintf("%d launches against %d (%.1f%% fewer); EAGLE-3 %.1f rounds on average, the flag %.1f",
		st.used, st.fixed, 100*st.saved(), float64(st.eagleRounds)/n, float64(st.flagRounds)/n)
}

// knownNoise is what the sequential rule would save on a seeds-shaped
// campaign if it knew each comparison's round sd exactly and every level
// moved together: the flag's tie and EAGLE-3's C=1 lead, each one Gaussian
// round difference a round, judged by z boundaries spending alpha by spend.
type knownNoise struct {
	flag, eagle, saved float64 // mean rounds to decide, fraction of launches saved
}

// savingsBounds holds the known-noise savings at the round sds measured on
// the seeds-shaped campaigns, by the rule's own spending and by linear
// spending (α·t, which spends more early).
type savingsBounds struct {
	flagSD, eagleSD, eaglePct float64
	obf, linear               knownNoise
}

// savingsBound measures the round sd of the flag's and of EAGLE-3's C=1
// comparisons on the seeds-shaped campaigns' full 12 rounds (each level's
// sample sd of the rounds' log ratios, its root mean square over campaigns
// and levels) and the savings a rule knowing them would reach.
func savingsBound(vs []*Verdict) savingsBounds {
	engines, _ := seedsShaped()
	truth := verdicttest.TrueLogRatios(engines[0], engines[1], honestySweep())
	var flagSS, eagleSS float64
	var flagN, eagleN int
	for _, v := range vs {
		for _, lv := range v.Levels {
			if ss, ok := roundVar(v, "flag", lv); ok {
				flagSS += ss
				flagN++
			}
			if lv.Concurrency != 1 {
				continue
			}
			if ss, ok := roundVar(v, "eagle3-topk4", lv); ok {
				eagleSS += ss
				eagleN++
			}
		}
	}
	b := savingsBounds{flagSD: 100 * math.Sqrt(flagSS/float64(flagN)), eagleSD: 100 * math.Sqrt(eagleSS/float64(eagleN))}
	eagleTruth := 100 * math.Expm1(truth[measure.ConcurrencyLevel(1)])
	b.eaglePct = eagleTruth
	// EAGLE-3 at C=1 is tested once its seven loaded levels, and the flag's
	// comparisons with them, are rejected: at α over the ten comparisons
	// left (Holm), as the rule tests it.
	b.obf = knownNoiseSavings(b.flagSD, b.eagleSD, 0.1, eagleTruth, func(a, x float64) float64 { return rule.SpendOBF(a, x) })
	b.linear = knownNoiseSavings(b.flagSD, b.eagleSD, 0.1, eagleTruth, func(a, x float64) float64 { return a * min(x, 1) })
	return b
}

// roundVar is the sample variance over rounds of the log ratio of
// variant's launch to the baseline's at level lv, every round both have.
func roundVar(v *Verdict, variant string, lv measure.Level) (float64, bool) {
	base, other := v.Scenario(v.Baseline), v.Scenario(variant)
	if base == nil || other == nil {
		return 0, false
	}
	bl, ol := base.Level(lv), other.Level(lv)
	if bl == nil || ol == nil {
		return 0, false
	}
	byRound := map[int]float64{}
	for _, l := range bl.Launches {
		byRound[l.Round] = l.Throughput
	}
	var ratios []float64
	for _, l := range ol.Launches {
		if b, ok := byRound[l.Round]; ok && b > 0 {
			ratios = append(ratios, l.Throughput/b)
		}
	}
	_, variance, n := rule.LogMoments(ratios)
	return variance, n >= 2
}

// knownNoiseSavings simulates the known-noise rule under seqPlan: the
// flag (true difference flagPct) closes when its (1 − 2α) repeated interval
// lies inside the 2% margin, EAGLE-3 (eaglePct) when |z| crosses the α/10
// boundary; the baseline runs until both have closed.
func knownNoiseSavings(flagSD, eagleSD, flagPct, eaglePct float64, spend func(alpha, t float64) float64) knownNoise {
	var fracs []float64
	for r := seqPlan.MinRounds; r <= seqPlan.MaxRounds; r++ {
		fracs = append(fracs, float64(r)/float64(seqPlan.MaxRounds))
	}
	const alpha, margin, sims = 0.05, 2.0, 20000
	tie := rule.SpendBoundaries(func(x float64) float64 { return spend(2*alpha, x) }, fracs)
	win := rule.SpendBoundaries(func(x float64) float64 { return spend(alpha/10, x) }, fracs)
	rng := rand.New(rand.NewPCG(7, 11))
	var out knownNoise
	var launches float64
	for range sims {
		var sf, se float64
		fr, er := seqPlan.MaxRounds, seqPlan.MaxRounds
		for r := 1; r <= seqPlan.MaxRounds; r++ {
			sf += flagPct + flagSD*rng.NormFloat64()
			se += eaglePct + eagleSD*rng.NormFloat64()
			k := r - seqPlan.MinRounds
			if k < 0 {
				continue
			}
			rr := float64(r)
			if fr == seqPlan.MaxRounds && math.Abs(sf/rr)+tie[k]*flagSD/math.Sqrt(rr) <= margin {
				fr = r
			}
			if er == seqPlan.MaxRounds && math.Abs(se/rr)/(eagleSD/math.Sqrt(rr)) >= win[k] {
				er = r
			}
		}
		out.flag += float64(fr) / sims
		out.eagle += float64(er) / sims
		launches += float64(fr+er+max(fr, er)) / sims
	}
	out.saved = 1 - launches/float64(3*seqPlan.MaxRounds)
	return out
}

// TestSequentialSavingsByMax measures the seeds-shaped savings at other
// plan maxima, BAKEOFF_SEQUENTIAL_MAXES (say "12,16,20,24"), with the A/A
// error rate at each; it is skipped without it, as its campaigns run long.
// A larger maximum costs the fixed design its whole length and the
// sequential rule only what the flag's tie needs, but its early boundaries
// are stricter (the information fraction of a round is smaller):
// docs/METHOD.md gives the table.
func TestSequentialSavingsByMax(t *testing.T) {
	env := os.Getenv("BAKEOFF_SEQUENTIAL_MAXES")
	if env == "" {
		t.Skip("BAKEOFF_SEQUENTIAL_MAXES not set")
	}
	syntheticCampaigns(t)
	engines, names := seedsShaped()
	n := seqCampaigns(16)
	for _, f := range strings.Split(env, ",") {
		mx, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || mx < seqPlan.MinRounds {
			t.Fatalf("BAKEOFF_SEQUENTIAL_MAXES: %q is not a round count of at least %d", f, seqPlan.MinRounds)
		}
		plan := SequentialPlan{MinRounds: seqPlan.MinRounds, MaxRounds: mx}
		var st savingsTally
		var undecided, comparisons, wrong int
		for seed := range uint64(n) {
			s := honestySweep()
			v := mustVerdict(t, verdicttest.CampaignInput(names, s, mx, verdicttest.Campaign(engines, s, mx, 23000+seed)), Options{Sequential: &plan})
			st.add(v)
			for _, variant := range []string{"eagle3-topk4", "flag"} {
				for c, cmp := range againstBaseline(v, variant) {
					comparisons++
					if cmp.Outcome == OutcomeInconclusive {
						undecided++
					}
					if variant == "flag" && cmp.Outcome == OutcomeSlower ||
						variant == "eagle3-topk4" && (c.Concurrency == 1) == (cmp.Outcome == OutcomeSlower) && cmp.Outcome != OutcomeInconclusive && cmp.Outcome != OutcomeTie {
						wrong++
					}
				}
			}
		}
		// The error rate at this maximum: the baseline against itself.
		var aa seqTally
		for seed := range uint64(n) {
			s := honestySweep()
			ls := verdicttest.Campaign([]verdicttest.Engine{realBaseline, realBaseline}, s, mx, 20000+seed)
			v := mustVerdict(t, verdicttest.CampaignInput([]string{"baseline", "variant"}, s, mx, ls), Options{Sequential: &plan})
			aa.add(againstBaseline(v, "variant"), nil)
		}
		t.Logf("max %d, %d campaigns: %s; %d of %d comparisons undecided; %d against the truth; A/A: %s",
			mx, n, st, undecided, comparisons, wrong, aa)
		if aa.winnerRate() > 0.05 {
			t.Errorf("max %d: a winner in %.1f%% of A/A campaigns, want ≤ 5%%", mx, 100*aa.winnerRate())
		}
		if wrong > 0 {
			t.Errorf("max %d: %d comparisons decided against the truth's sign", mx, wrong)
		}
		// The launches against the fixed design of the same maximum are
		// logged, not held to a goal: a larger maximum saves more of a
		// longer fixed night, which is no saving to the user, whose cost is
		// the launches to a decided verdict (docs/METHOD.md).
	}
}
