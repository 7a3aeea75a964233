package plan

import (
	"fmt"
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// oneComparison is a campaign of a baseline and one variant at one level,
// done rounds run, the variant's estimate d (log) with one round's sd
// roundSD, judged by rounds {min: 3, max: 12}.
func oneComparison(done int, d, roundSD float64, holm int) Inputs {
	in := Inputs{
		Levels:    []Level{{Key: measure.ConcurrencyLevel(1), PerRequest: 1, Min: 30, Max: 30}},
		Launch:    600,
		Scenarios: 2,
		Noise:     []Noise{{Level: 0, Launch: roundSD * roundSD, Estimate: d, Measured: true}},
		Goal: Goal{MarginPct: verdict.DefaultEquivalenceMarginPct, Alpha: 0.05, Holm: holm,
			MinRounds: 3, MaxRounds: 12, DFPerRound: 1.5},
	}
	for range done {
		in.Past = append(in.Past, []int{30})
	}
	return in
}

// TestClosingIsTheRule: at a look, with nothing left to forecast, the
// planner closes a comparison exactly when the sequential rule's own tests
// do, on the estimate the rule tests (widened by rule.Diff.Widened): a tie
// (rule.Plan.Ties at 2α) or a win or loss (rule.Plan.Rejects at α over
// Holm's count), with the boundaries of the look's df. Each estimate sits
// a hair inside or outside one of the rule's boundaries, so a planner whose
// widening, tie level, Holm count or df drifted from the rule's by a few
// percent decides one of them otherwise.
func TestClosingIsTheRule(t *testing.T) {
	const sd = 0.02
	for _, tc := range []struct{ done, holm int }{{3, 1}, {4, 8}, {6, 1}, {6, 24}, {9, 48}, {12, 8}} {
		in := oneComparison(tc.done, 0, sd, tc.holm)
		g := in.Goal.withDefaults()
		p := verdict.SequentialPlan{MinRounds: g.MinRounds, MaxRounds: g.MaxRounds}
		var looks []float64
		for r := p.MinRounds; r <= tc.done; r++ {
			looks = append(looks, float64(r)/float64(p.MaxRounds))
		}
		e := rule.Diff{SE: sd / math.Sqrt(float64(tc.done)), DF: g.DFPerRound * float64(tc.done-1)}.Widened(1)
		lo, hi := rule.TieBounds(g.MarginPct)
		tieAt := hi - p.Critical(2*g.Alpha, looks, e.DF)*e.SE
		rejectAt := p.Critical(g.Alpha/float64(tc.holm), looks, e.DF) * e.SE
		for _, d := range []float64{0, tieAt - 0.005*e.SE, tieAt + 0.005*e.SE, rejectAt - 0.005*e.SE, rejectAt + 0.005*e.SE, -rejectAt - 0.005*e.SE} {
			t.Run(fmt.Sprintf("%d rounds, Holm over %d, %+.2f%%", tc.done, tc.holm, 100*d), func(t *testing.T) {
				in.Noise[0].Estimate = d
				got := in.closing(in.Noise[0], in.pastVar()[0], tc.done, 0, in.boundariesAt(g, tc.done))
				e.D = d
				tie, rejects := p.Ties(e, looks, g.Alpha, lo, hi), p.Rejects(e, looks, g.Alpha/float64(tc.holm))
				want := 0.0
				if tie || rejects {
					want = 1
				}
				if got != want {
					t.Errorf("the planner closes it with chance %g; the rule: tie %v, win or loss %v", got, tie, rejects)
				}
			})
		}
	}
}

// TestClosingBeforeTheFirstLook: nothing closes before the plan's first
// look, however plain the difference.
func TestClosingBeforeTheFirstLook(t *testing.T) {
	in := oneComparison(2, 0.5, 0.001, 1)
	g := in.Goal.withDefaults()
	if got := in.closing(in.Noise[0], in.pastVar()[0], 2, 0, in.boundariesAt(g, 2)); got != 0 {
		t.Errorf("closed after 2 rounds with chance %g, the first look is after 3", got)
	}
}

// TestLentVarianceFades: the profile's loan weighs less as tonight's df
// grow, as the rule pools them; without a loan nothing moves.
func TestLentVarianceFades(t *testing.T) {
	b := boundaries{ownNow: 3, lentDF: 12, lentVar: 2}
	pooled := (3*1 + 12*2) / 15.0 // tonight's variance 1, the loan's 2
	past := 4 * pooled
	for _, tc := range []struct {
		ownAt, rule float64
	}{
		{3, 1}, {15, (15*1 + 12*2) / 27.0 / pooled}, {1e9, 1 / pooled},
	} {
		b.ownAt = tc.ownAt
		rule, own := b.lent(past, 4)
		if math.Abs(rule-tc.rule) > 1e-6 || math.Abs(own-1/pooled) > 1e-6 {
			t.Errorf("own df %g: the rule's variance ×%.4f, tonight's ×%.4f; want ×%.4f and ×%.4f", tc.ownAt, rule, own, tc.rule, 1/pooled)
		}
	}
	if rule, own := (boundaries{ownNow: 3, ownAt: 9}).lent(past, 4); rule != 1 || own != 1 {
		t.Errorf("no loan: ×%g, ×%g", rule, own)
	}
}

// TestLoanWhereTheRuleTakesIt: the forecast lends the profile's df where
// the rule takes them (verdict.LoanNarrows): a sequential plan's first
// look, not its last, where the tie stands on tonight's rounds; a fixed
// design's one look whenever there is a loan.
func TestLoanWhereTheRuleTakesIt(t *testing.T) {
	seq := Goal{MinRounds: 3, MaxRounds: 12, DFPerRound: 2, LentDF: 12, LentVar: 1e-4}.withDefaults()
	tie := 2 * seq.Alpha
	if !seq.lends(tie, 3) || seq.df(tie, 3) != 4+12 {
		t.Errorf("first look: lends %v, df %g; want the loan, 16 df", seq.lends(tie, 3), seq.df(tie, 3))
	}
	if seq.lends(tie, 12) || seq.df(tie, 12) != 22 {
		t.Errorf("last look: lends %v, df %g; want tonight's 22 df alone", seq.lends(tie, 12), seq.df(tie, 12))
	}
	b := Inputs{Goal: seq}.boundariesAt(seq, 12)
	if b.tieLent || b.df != 22 {
		t.Errorf("last look's boundaries: tie lent %v, df %g", b.tieLent, b.df)
	}
	fixed := seq
	fixed.Fixed = true
	if !fixed.lends(tie, 12) || fixed.df(tie, 12) != 34 {
		t.Errorf("fixed design: lends %v, df %g; want the loan, 34 df", fixed.lends(tie, 12), fixed.df(tie, 12))
	}
}

// TestStops: a variant the next look surely closes stops after it, one
// that all but never closes (no tie within reach, a win or loss only by a
// lucky draw past the boundary, 3% at a look) runs to the maximum, and the
// baseline runs while either does.
func TestStops(t *testing.T) {
	sure := Noise{Level: 0, Variant: 0, Launch: 1e-8, Estimate: 0, Measured: true}
	never := Noise{Level: 0, Variant: 1, Launch: 0.5 * 0.5, Estimate: 0, Measured: true}
	for _, tc := range []struct {
		name     string
		noise    []Noise
		rounds   map[int]float64
		baseline float64
		decides  float64
	}{
		{"closes at the next look", []Noise{sure}, map[int]float64{0: 7}, 7, 1},
		{"never closes", []Noise{never}, map[int]float64{1: 12}, 12, 0},
		{"one of each", []Noise{sure, never}, map[int]float64{0: 7, 1: 12}, 12, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := oneComparison(6, 0, 0.02, 1)
			in.Noise = tc.noise
			s := in.Stops([]int{30})
			const tol = 0.3 // rounds: the lucky draws of five looks
			launches := tc.baseline - 6
			for v, r := range tc.rounds {
				if math.Abs(s.Rounds[v]-r) > tol {
					t.Errorf("variant %d: %.2f rounds, want %g", v, s.Rounds[v], r)
				}
				launches += r - 6
			}
			if math.Abs(s.Baseline-tc.baseline) > tol || math.Abs(s.Launches-launches) > 2*tol || math.Abs(s.Decides-tc.decides) > 0.05 {
				t.Errorf("baseline %.2f rounds, %.2f launches, decides %.2f; want %g, %g, %g", s.Baseline, s.Launches, s.Decides,
					tc.baseline, launches, tc.decides)
			}
		})
	}
}

// TestObservedTakesTheRulesTerms: at a sequential campaign's first look the
// planner's goal is the rule's: the night waits on the open comparisons
// with the baseline (not every pair of scenarios), Holm divides α among the
// family less its rejections, and a host's profile lends its df at every
// look rather than per round measured.
func TestObservedTakesTheRulesTerms(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile bool
	}{{"no profile", false}, {"a profile", true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newForecastCampaign(31000)
			c.profile = tc.profile
			o, err := c.options(12)
			if err != nil {
				t.Fatal(err)
			}
			v, err := verdict.DecideRun(c.input(forecastMin), o)
			if err != nil {
				t.Fatal(err)
			}
			in := Observed(v, nil, nil, nil, func(_ string, _ measure.Level, c verdict.Comparison) bool { return c.Open }, Goal{MinRounds: 3, MaxRounds: 12})
			g, open, rejected := in.Goal, 0, 0
			for _, row := range v.Rows {
				for _, cell := range row.Cells {
					if cell.Compared && cell.Open {
						open++
					}
					if cell.Compared && cell.Decided && cell.Outcome != verdict.OutcomeTie {
						rejected++
					}
				}
			}
			if g.Family != open || len(in.Noise) != open || open >= v.Comparisons {
				t.Errorf("family %d, %d noise figures; want the %d open comparisons with the baseline of %d", g.Family, len(in.Noise), open, v.Comparisons)
			}
			if g.Holm != v.Comparisons-rejected {
				t.Errorf("Holm over %d, want %d less %d rejected", g.Holm, v.Comparisons, rejected)
			}
			wantLent := 0.0
			if tc.profile {
				wantLent = verdict.PriorMaxDF
			}
			if g.LentDF != wantLent || (wantLent > 0) != (g.LentVar > 0) {
				t.Errorf("the profile lends %g df of variance %g, want %g df", g.LentDF, g.LentVar, wantLent)
			}
			// Tonight's own df: at most (R − 1)² in all, the rank of R rounds'
			// covariance (rule.PooledVar).
			if own := g.DFPerRound * float64(forecastMin-1); own <= 0 || own > float64((forecastMin-1)*(forecastMin-1))+1e-9 {
				t.Errorf("tonight's df %.1f after %d rounds, the loan left in", own, forecastMin)
			}
		})
	}
}
