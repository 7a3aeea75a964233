package verdict

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/slo"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// truncated is in with the named scenario's launches after round k removed,
// as if it had stopped there.
func truncated(in records.Input, name string, k int) records.Input {
	out := in
	out.Launches = map[string][]records.Launch{}
	for n, ls := range in.Launches {
		if n == name {
			ls = slices.DeleteFunc(slices.Clone(ls), func(l records.Launch) bool { return l.Round > k })
		}
		out.Launches[n] = ls
	}
	return out
}

// TestSequentialStopsAndOpen: a variant 50% slower is decided by round 5 of
// a plan that looks from round 3 (at 3 and 4 rounds the pooled variance has
// 2 to 4 df, and no boundary can be met) and stops; an A/A pair six rounds
// in is open, and Open names it; the fixed design has nothing open.
func TestSequentialStopsAndOpen(t *testing.T) {
	slow := realBaseline
	slow.Slowdown = 1.5
	s := verdicttest.DefaultSweep()
	names := []string{"baseline", "slow", "same"}
	in := verdicttest.CampaignInput(names, s, 6, verdicttest.Campaign([]verdicttest.Engine{realBaseline, slow, realBaseline}, s, 6, 41))
	v := mustVerdict(t, in, Options{Sequential: &SequentialPlan{MinRounds: 3, MaxRounds: 12}})
	if got := Open(v); !slices.Equal(got, []string{"same"}) {
		t.Errorf("Open = %v, want [same]", got)
	}
	for _, vs := range v.Sequential.Variants {
		t.Logf("%s: %d rounds, %s", vs.Variant, vs.Rounds, vs.Reason)
	}
	st := v.Sequential.Variants[0]
	if !st.Stopped || st.StoppedAfter > 5 || st.Rounds != st.StoppedAfter || !strings.HasPrefix(st.Reason, "decided after") {
		t.Errorf("the 50%% slower variant: %+v, want decided after 5 rounds at most", st)
	}
	for _, row := range v.Rows {
		c := v.Cell(row.Level, "slow")
		if c.Outcome != OutcomeSlower || !c.Decided || c.DecidedAtRound > st.StoppedAfter {
			t.Errorf("%s: %s decided %v at %d", row.Level, c.Outcome, c.Decided, c.DecidedAtRound)
		}
		if o := v.Cell(row.Level, "same"); o.Decided == o.Open {
			t.Errorf("%s: the A/A comparison is decided %v and open %v", row.Level, o.Decided, o.Open)
		}
	}
	if Open(mustVerdict(t, in, Options{})) != nil {
		t.Error("a fixed design names open variants")
	}
}

// TestSequentialLaterDataUnused: a comparison closed at a look reports the
// same outcome, estimate and interval whether the variant's later launches
// exist or not: the verdict replays the looks, and a stopped variant's
// later data decide nothing.
func TestSequentialLaterDataUnused(t *testing.T) {
	s := verdicttest.DefaultSweep()
	e3 := verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)
	in := verdicttest.CampaignInput([]string{"baseline", "eagle3"}, s, 12, verdicttest.Campaign([]verdicttest.Engine{realBaseline, e3}, s, 12, 43))
	plan := &SequentialPlan{MinRounds: 3, MaxRounds: 12}
	full := mustVerdict(t, in, Options{Sequential: plan})
	st := full.Sequential.Variants[0]
	if !st.Stopped || st.StoppedAfter >= 12 {
		t.Fatalf("EAGLE-3 did not stop early: %+v", st)
	}
	cut := mustVerdict(t, truncated(in, "eagle3", st.StoppedAfter), Options{Sequential: plan})
	for _, row := range full.Rows {
		a, b := full.Cell(row.Level, "eagle3"), cut.Cell(row.Level, "eagle3")
		if a.Outcome != b.Outcome || a.DecidedAtRound != b.DecidedAtRound || a.DeltaPct != b.DeltaPct ||
			a.SpeedupLo != b.SpeedupLo || a.SpeedupHi != b.SpeedupHi {
			t.Errorf("%s: with the later launches %s %+.2f%% [%.4f, %.4f] at %d; without %s %+.2f%% [%.4f, %.4f] at %d",
				row.Level, a.Outcome, a.DeltaPct, a.SpeedupLo, a.SpeedupHi, a.DecidedAtRound,
				b.Outcome, b.DeltaPct, b.SpeedupLo, b.SpeedupHi, b.DecidedAtRound)
		}
	}
	if got := Cost(full, nil); got.Launches != 2*st.StoppedAfter || got.FixedLaunches != 24 {
		t.Errorf("cost: %d launches of %d, want %d of 24 (the baseline stops with the last variant)", got.Launches, got.FixedLaunches, 2*st.StoppedAfter)
	}
}

// TestSequentialRepeatedInterval: the reported interval is the repeated
// one, wider than the fixed design's on the same rounds, and narrows to
// near it at the last look.
func TestSequentialRepeatedInterval(t *testing.T) {
	plan := SequentialPlan{MinRounds: 3, MaxRounds: 12}
	sched := plan.Schedule()
	for _, tc := range []struct {
		looks int
		df    float64
		min   float64 // the critical value must exceed the fixed t's by this factor
		max   float64
	}{
		{1, 5, 2, 1e9},
		{4, 10, 1.2, 2},
		{10, 20, 1.02, 1.15},
	} {
		fixed := rule.Diff{DF: tc.df, SE: 1}.Quantile(0.025)
		got := plan.Critical(0.05, sched[:tc.looks], tc.df)
		if r := got / fixed; r < tc.min || r > tc.max {
			t.Errorf("look %d, df %g: critical t %.3f, %.3f× the fixed design's %.3f, want %g..%g×", tc.looks, tc.df, got, r, fixed, tc.min, tc.max)
		}
	}
}

// TestCostSentence: the cost line's words.
func TestCostSentence(t *testing.T) {
	for _, tc := range []struct {
		cc   CampaignCost
		want string
	}{
		{CampaignCost{Comparisons: 16, Decided: 14, Inconclusive: 2, MaxMDEPct: 2.6, Launches: 20, FixedLaunches: 36, Duration: 5*time.Hour + 10*time.Minute},
			"decided 14 of 16 comparisons with the baseline in 5h10m with 20 launches (the fixed design: 36); 2 inconclusive (MDE 2.6%)"},
		{CampaignCost{Comparisons: 8, Decided: 5, Open: 3, Launches: 8, FixedLaunches: 24},
			"decided 5 of 8 comparisons with the baseline with 8 launches (the fixed design: 24); 3 open"},
		{CampaignCost{Comparisons: 8, Decided: 8, Launches: 12, FixedLaunches: 12, Duration: 42 * time.Minute},
			"decided 8 of 8 comparisons with the baseline in 42m with 12 launches"},
	} {
		if got := tc.cc.sentence(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// TestSequentialCapacity: the capacity comparison is one of the family's
// sequential comparisons: EAGLE-3 topk=4's capacity, a third of the
// baseline's, is decided at a look and keeps the variant open until then.
func TestSequentialCapacity(t *testing.T) {
	s := sloSweep()
	names := []string{"baseline", "eagle3"}
	in := verdicttest.CampaignInput(names, s, 12, verdicttest.Campaign([]verdicttest.Engine{realBaseline, verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)}, s, 12, 45))
	o := sloTestObjective
	in.Manifest.SLO = &o
	v := mustVerdict(t, in, Options{Sequential: &SequentialPlan{MinRounds: 3, MaxRounds: 12}})
	cc := v.Capacity.Comparisons[0]
	st := v.Sequential.Variants[0]
	t.Logf("%s; decided %v after round %d; %s", cc.Sentence, cc.Decided, cc.DecidedAtRound, st.Reason)
	if !cc.Decided || cc.Outcome != OutcomeSlower || cc.Winner != "baseline" {
		t.Errorf("capacity: %s, decided %v, want the baseline the winner", cc.Outcome, cc.Decided)
	}
	if st.Comparisons != len(s.Concurrency)+1 || !st.Stopped || st.StoppedAfter < cc.DecidedAtRound {
		t.Errorf("EAGLE-3: %+v, want %d comparisons with the capacity, stopped no earlier than round %d", st, len(s.Concurrency)+1, cc.DecidedAtRound)
	}
}

// TestSequentialRounds: once every variant stopped, the campaign planned
// the rounds up to the last stop and completed them, and no note calls a
// stopped variant's missing rounds a shortfall.
func TestSequentialRounds(t *testing.T) {
	s := verdicttest.DefaultSweep()
	slow := realBaseline
	slow.Slowdown = 1.5
	in := verdicttest.CampaignInput([]string{"baseline", "slow"}, s, 12, verdicttest.Campaign([]verdicttest.Engine{realBaseline, slow}, s, 12, 47))
	plan := &SequentialPlan{MinRounds: 3, MaxRounds: 12}
	full := mustVerdict(t, in, Options{Sequential: plan})
	k := full.Sequential.Variants[0].StoppedAfter
	v := mustVerdict(t, truncated(truncated(in, "slow", k), "baseline", k), Options{Sequential: plan})
	if v.RoundsPlanned != k || v.RoundsCompleted != k {
		t.Errorf("planned %d, completed %d, want %d and %d", v.RoundsPlanned, v.RoundsCompleted, k, k)
	}
	for _, n := range v.Notes {
		if n.Check == CheckRounds && strings.Contains(n.Text, "rounds asked for") {
			t.Errorf("note: %s", n.Text)
		}
	}
}

// TestSequentialStoppedPairsLookNoMore: a comparison between two variants
// closes when either of them stops (docs/METHOD.md, "The family"): it takes
// no look on launches a stopped variant would not have had, so the rows it
// decides (and the level a rejection there would pass on) are the same
// whether those launches exist or not. Two variants 50% and 47% faster than
// the baseline stop after a few rounds, when their 2% difference is far from
// decided; the campaign's twelve rounds would decide it.
func TestSequentialStoppedPairsLookNoMore(t *testing.T) {
	s := verdicttest.DefaultSweep()
	slowBase := realBaseline
	slowBase.Slowdown = 1.5
	near := realBaseline
	near.Slowdown = 1.02
	names := []string{"baseline", "fast", "near"}
	in := verdicttest.CampaignInput(names, s, 12, verdicttest.Campaign([]verdicttest.Engine{slowBase, realBaseline, near}, s, 12, 49))
	plan := &SequentialPlan{MinRounds: 3, MaxRounds: 12}
	full := mustVerdict(t, in, Options{Sequential: plan})
	cut := in
	for _, vs := range full.Sequential.Variants {
		if !vs.Stopped || vs.StoppedAfter >= 12 {
			t.Fatalf("%s did not stop early: %+v", vs.Variant, vs)
		}
		cut = truncated(cut, vs.Variant, vs.StoppedAfter)
	}
	last := max(full.Sequential.Variants[0].StoppedAfter, full.Sequential.Variants[1].StoppedAfter)
	cut = truncated(cut, "baseline", last)
	short := mustVerdict(t, cut, Options{Sequential: plan})
	for i, row := range full.Rows {
		got, want := row, short.Rows[i]
		if got.Outcome != want.Outcome || got.Winner != want.Winner || !slices.Equal(got.Tied, want.Tied) ||
			!slices.Equal(got.Unresolved, want.Unresolved) {
			t.Errorf("%s: with the later launches %s %q %v %v; without %s %q %v %v", row.Level,
				got.Outcome, got.Winner, got.Tied, got.Unresolved, want.Outcome, want.Winner, want.Tied, want.Unresolved)
		}
		for _, name := range names[1:] {
			a, b := full.Cell(row.Level, name), short.Cell(row.Level, name)
			if a.Outcome != b.Outcome || a.DecidedAtRound != b.DecidedAtRound || a.PAdjusted != b.PAdjusted {
				t.Errorf("%s %s: with the later launches %s at %d, p %g; without %s at %d, p %g", row.Level, name,
					a.Outcome, a.DecidedAtRound, a.PAdjusted, b.Outcome, b.DecidedAtRound, b.PAdjusted)
			}
		}
	}
}

// TestSequentialAdjustedP: the adjusted p shown is the Holm-adjusted p of the
// test the decision made, below alpha exactly when that test rejected. The
// repeated p-value alone, read off its grid, missed by up to 5·10⁻⁴ of
// itself near a boundary: at t just past the first look's boundary it gave
// 0.05002 beside "significant". Within a look the adjusted p's are Holm's:
// each at least that of every rejection before it. A capacity call the
// bounds forbid is significant (its test rejected) without a rejection that
// passes its level on, as in the fixed design.
func TestSequentialAdjustedP(t *testing.T) {
	plan := SequentialPlan{MinRounds: 3, MaxRounds: 12}
	sched := plan.Schedule()
	v := &Verdict{Alpha: 0.05, Confidence: 0.95}
	const se = 0.01
	// at is a hypothesis at the first look of a throughput comparison whose
	// t is f times the boundary of a test at alpha/alive, df 2.
	at := func(alive int, f float64) *hypothesis {
		crit := plan.Critical(v.Alpha/float64(alive), sched[:1], 2)
		return &hypothesis{capacity: -1, looks: sched[:1], n: 3,
			at: Comparison{Method: MethodLaunches, Rounds: 3, DF: 2, est: rule.Diff{D: -f * crit * se, SE: se, DF: 2}}}
	}
	forbidden := at(1, 1.5)
	forbidden.capacity = 0
	forbidden.base, forbidden.variant = &ScenarioCapacity{Bound: slo.Exact}, &ScenarioCapacity{Bound: slo.Above}
	for _, tc := range []struct {
		name     string
		hs       []*hypothesis
		rejected []bool
	}{
		{"just past the boundary", []*hypothesis{at(1, 1+1e-9)}, []bool{true}},
		{"just short of it", []*hypothesis{at(1, 1-1e-9)}, []bool{false}},
		// The larger p passes only once the smaller passed its level on;
		// its own p times one is below the other's times two, and Holm's
		// adjusted p is the larger of the two.
		{"step-down", []*hypothesis{at(2, 1.05), at(2, 1.1)}, []bool{true, true}},
		{"a capacity the bounds forbid to call", []*hypothesis{forbidden}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			left := holmLook(plan, v.Alpha, tc.hs, len(tc.hs))
			var cs []Comparison
			for i, h := range tc.hs {
				c := finishHypothesis(v, plan, h, len(tc.hs))
				cs = append(cs, c)
				if h.rejected != tc.rejected[i] {
					t.Errorf("hypothesis %d: rejected %v, want %v", i, h.rejected, tc.rejected[i])
				}
				if c.Significant != (c.PAdjusted < v.Alpha) {
					t.Errorf("hypothesis %d: significant %v beside an adjusted p of %.6f", i, c.Significant, c.PAdjusted)
				}
			}
			slices.SortFunc(cs, func(a, b Comparison) int { return cmp.Compare(a.P, b.P) })
			for i := 1; i < len(cs); i++ {
				if cs[i].PAdjusted < cs[i-1].PAdjusted {
					t.Errorf("p %.6f adjusted to %.6f, below p %.6f adjusted to %.6f", cs[i].P, cs[i].PAdjusted, cs[i-1].P, cs[i-1].PAdjusted)
				}
			}
			if want := len(tc.hs) - len(slices.DeleteFunc(slices.Clone(tc.rejected), func(r bool) bool { return !r })); left != want {
				t.Errorf("%d left unrejected, want %d", left, want)
			}
		})
	}
}

// TestSequentialAdjustedPPerLook: a decision's adjusted p is Holm's at the
// look that decided it, and not raised to the close call of an earlier
// look. Carried from look to look, the first close call's p was the p of
// every decision after it: on a noisy run a −59% loss read p=0.046, as
// marginal as that call.
func TestSequentialAdjustedPPerLook(t *testing.T) {
	plan := SequentialPlan{MinRounds: 3, MaxRounds: 12}
	sched := plan.Schedule()
	const alpha, se, df = 0.05, 0.01, 4
	// at is a hypothesis at the first k looks whose t is f times the
	// boundary of a test at alpha/alive.
	at := func(k, alive int, f float64) *hypothesis {
		crit := plan.Critical(alpha/float64(alive), sched[:k], df)
		return &hypothesis{capacity: -1, looks: sched[:k], n: plan.MinRounds + k - 1,
			at: Comparison{Method: MethodLaunches, Rounds: plan.MinRounds + k - 1, DF: df, est: rule.Diff{D: -f * crit * se, SE: se, DF: df}}}
	}
	alive := 3
	close := at(1, alive, 1.001)
	alive = holmLook(plan, alpha, []*hypothesis{close}, alive)
	strong := at(2, alive, 5)
	alive = holmLook(plan, alpha, []*hypothesis{strong}, alive)
	if !close.rejected || !strong.rejected || alive != 1 {
		t.Fatalf("rejected %v and %v, %d left: the fixture no longer decides both", close.rejected, strong.rejected, alive)
	}
	if close.pAdj < 0.04 || close.pAdj >= alpha {
		t.Errorf("the close call's adjusted p is %.4f, want just under %v", close.pAdj, alpha)
	}
	if own := adjustedP(plan, strong, alpha); strong.pAdj != own || own > close.pAdj/4 {
		t.Errorf("the later decision's adjusted p is %.6f, its own at its look %.6f, the earlier close call's %.4f", strong.pAdj, own, close.pAdj)
	}
}

// TestSequentialSaysItsCorrection: a sequential plan corrects by Holm's
// procedure made sequential whatever Options.Correction asks (that applies
// to the fixed design alone), and the verdict says the correction it
// applied, not the one asked for.
func TestSequentialSaysItsCorrection(t *testing.T) {
	in := doubtCampaign(t)
	for _, c := range []string{rule.CorrectionBH, rule.CorrectionNone} {
		v, err := DecideRun(in, Options{Correction: c, Sequential: &SequentialPlan{MinRounds: 2, MaxRounds: 4}})
		if err != nil {
			t.Fatal(err)
		}
		if v.Correction != rule.CorrectionHolm {
			t.Errorf("asked %s under a sequential plan: the verdict says %s, want %s", c, v.Correction, rule.CorrectionHolm)
		}
		if f, err := DecideRun(in, Options{Correction: c}); err != nil || f.Correction != c {
			t.Errorf("asked %s under the fixed design: %v, %v", c, f.Correction, err)
		}
	}
}
