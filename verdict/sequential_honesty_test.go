package verdict

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
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
func seqInput(engines []verdicttest.Engine, names []string, seed uint64) Input {
	s := verdicttest.DefaultSweep()
	ls := verdicttest.Campaign(engines, s, seqPlan.MaxRounds, seed)
	return campaignInput(names, s, seqPlan.MaxRounds, ls)
}

func mustVerdict(t *testing.T, in Input, o Options) *Verdict {
	t.Helper()
	v, err := FromRecords(in, o)
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
			corr = CorrectionNone
		}
		decide(fam, rule{Alpha: v.Alpha, Confidence: v.Confidence, Correction: corr,
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
		if r, ok := truth[c]; ok && cmp.SpeedupLo <= r && r <= cmp.SpeedupHi {
			st.covered++
		}
	}
	if named {
		st.winnerCampaigns++
	}
}

func (st seqTally) winnerRate() float64 {
	return float64(st.winnerCampaigns) / float64(max(st.campaigns, 1))
}

func (st seqTally) coverage() float64 { return float64(st.covered) / float64(max(st.comparisons, 1)) }

func (st seqTally) String() string {
	return fmt.Sprintf("%d campaigns, %d comparisons: faster %d, slower %d, tie %d; a winner in %d campaigns (%.1f%%); interval holds the truth at %d (%.1f%%)",
		st.campaigns, st.comparisons, st.faster, st.slower, st.ties, st.winnerCampaigns, 100*st.winnerRate(), st.covered, 100*st.coverage())
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
