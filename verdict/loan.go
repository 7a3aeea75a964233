package verdict

import (
	"math"

	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// Where the sequential rule takes the profile's loan. Lent at every look, a
// profile costs launches: its slack (PriorSlack) doubles the variance it
// lends, and by the fourth or fifth round tonight's own df make an interval
// narrower than the loan's, so the late looks, where the ties close, are
// widened (docs/METHOD.md, "A host's noise profile", measured on the
// sequential rule by TestPriorSlackSequential). So each test and each
// interval of a look takes the loan only where it narrows that test's
// boundary, judged on the df alone, as if tonight's noise matched the
// profile: at the first looks, whose nominal levels are tiny and whose own
// df are few, the loan's df shrink the t quantile more than its slack
// widens the error; later, tonight's rounds stand alone. The choice is a
// function of the design (the look, its level, the df), never of the
// data, so each test keeps the error rate of whichever estimate it takes.

// LoanNarrows reports whether a loan of lentDF degrees of freedom, carrying
// PriorSlack times tonight's variance, narrows the boundary of a test at
// level at the last of looks for a comparison with ownDF of its own: the
// t quantile at ownDF + lentDF times the error the loan widens (the pooled
// variance over tonight's, had tonight matched the profile) below the t
// quantile at ownDF. The planner forecasts the looks by it too.
func LoanNarrows(plan SequentialPlan, looks []float64, level, ownDF, lentDF float64) bool {
	if lentDF <= 0 {
		return false
	}
	if ownDF <= 0 {
		return true
	}
	grow := math.Sqrt((ownDF + PriorSlack*lentDF) / (ownDF + lentDF))
	return plan.Critical(level, looks, ownDF+lentDF)*grow < plan.Critical(level, looks, ownDF)
}

// judged is the estimate c's test or interval at level takes at looks: the
// one with the profile's loan where the loan narrows its boundary
// (LoanNarrows), else tonight's alone; est when nothing was lent.
func (c *Comparison) judged(plan SequentialPlan, looks []float64, level float64) rule.Diff {
	if !c.own.OK() || len(looks) == 0 {
		return c.est
	}
	if LoanNarrows(plan, looks, level, c.own.DF, c.est.DF-c.own.DF) {
		return c.est
	}
	return c.own
}
