package verdict

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// TestLoanNarrows: the loan narrows a first look's boundary, whose level is
// tiny and whose own df are few, and not a last look's, where tonight's df
// suffice and the loan's doubled variance would widen it.
func TestLoanNarrows(t *testing.T) {
	plan := SequentialPlan{MinRounds: 3, MaxRounds: 12}
	first, last := plan.Schedule()[:1], plan.Schedule()
	for _, c := range []struct {
		name                 string
		looks                []float64
		level, ownDF, lentDF float64
		want                 bool
	}{
		{"first look, a win at α/16, 4 df", first, 0.05 / 16, 4, 12, true},
		{"first look, a tie at 2α, 4 df", first, 0.1, 4, 12, true},
		{"last look, a tie at 2α, 19 df", last, 0.1, 19, 12, false},
		{"last look, a win at α/16, 19 df", last, 0.05 / 16, 19, 12, false},
		{"no loan", first, 0.1, 4, 0, false},
		{"no df of its own", first, 0.1, 0, 12, true},
	} {
		if got := LoanNarrows(plan, c.looks, c.level, c.ownDF, c.lentDF); got != c.want {
			t.Errorf("%s: LoanNarrows = %v, want %v", c.name, got, c.want)
		}
	}
	// judged picks by the df alone: the same two estimates give the loan's
	// at the first look and tonight's at the last.
	c := Comparison{est: rule.Diff{D: 0.01, SE: 0.012, DF: 16}, own: rule.Diff{D: 0.01, SE: 0.008, DF: 4}}
	if e := c.judged(plan, first, 0.1); e != c.est {
		t.Errorf("first look: judged on %+v, want the loan's %+v", e, c.est)
	}
	c = Comparison{est: rule.Diff{D: 0.01, SE: 0.012, DF: 31}, own: rule.Diff{D: 0.01, SE: 0.008, DF: 19}}
	if e := c.judged(plan, last, 0.1); e != c.own {
		t.Errorf("last look: judged on %+v, want tonight's %+v", e, c.own)
	}
	bare := Comparison{est: c.est}
	if e := bare.judged(plan, last, 0.1); e != c.est {
		t.Errorf("without a loan: judged on %+v, want est", e)
	}
}

// TestMatchingProfileCostsNoRounds: single comparisons of no difference on
// a quiet host, judged by the sequential rule with a profile that matches
// the host, close no later than without one (within 3%). Lent at every
// look, the profile's doubled variance held the late looks' ties open: 9.6
// rounds against 8.5 (docs/METHOD.md, "On the sequential rule: the loan
// only where it narrows").
func TestMatchingProfileCostsNoRounds(t *testing.T) {
	syntheticCampaigns(t)
	const n = 1000
	nz := sizeCases[len(sizeCases)-1] // no drift
	plan := SequentialPlan{MinRounds: 3, MaxRounds: 12}
	host := hostRoundVar(nz, plan.MaxRounds, 500, 77)
	prior := &NoisePrior{Var: host, DF: 40}
	with := slackRates(plan, nz, n, 78, 0, prior, true)
	without := slackRates(plan, nz, n, 78, 0, nil, false)
	t.Logf("A/A: %.2f rounds to close with a matching profile, %.2f without; size %.2f%% and %.2f%%",
		with.meanRounds(), without.meanRounds(), 100*with.calledRate(), 100*without.calledRate())
	if with.meanRounds() > 1.03*without.meanRounds() {
		t.Errorf("a matching profile: %.2f rounds to close, without it %.2f: the loan lengthens the night", with.meanRounds(), without.meanRounds())
	}
	if d := math.Abs(with.calledRate() - without.calledRate()); d > 0.02 {
		t.Errorf("the profile moved the size by %.1f points", 100*d)
	}
}
