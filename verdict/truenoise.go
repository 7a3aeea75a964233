package verdict

import (
	"math"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// trueNoise gives the true variance of one round's paired log difference
// between scenarios a and b at level c: what the validation's floor, "the
// rule given the true variance" (docs/METHOD.md, "The floor of the
// four-scenario campaign"), puts in place of the rule's estimate. ok is
// false where it does not know. No campaign has it; only this package's
// tests set it (Options.truth), so that the rule's cost of estimating its
// variance is measured on the same campaigns, spending, family and looks as
// the rule itself.
type trueNoise func(a, b string, c measure.Level) (v float64, ok bool)

// trueDF stands for infinitely many degrees of freedom: a t quantile at
// 10⁶ df is the normal's to six digits.
const trueDF = 1e6

// apply puts the true variance in place of the estimate in each of the
// launch-paired comparisons of a and b: no df to estimate it from, no
// serial widening (the variance is the mean's own), the same mean.
func (k trueNoise) apply(a, b string, cs map[measure.Level]*Comparison, conf float64) {
	for c, cmp := range cs {
		tv, ok := k(a, b, c)
		if !ok || cmp.Method != MethodLaunches || cmp.Rounds < 1 {
			continue
		}
		e := rule.Diff{D: cmp.est.D, SE: math.Sqrt(tv / float64(cmp.Rounds)), DF: trueDF}
		nc := newComparison(e, cmp.Method, cmp.Rounds, math.Sqrt(tv), conf)
		nc.WithinShare = cmp.WithinShare
		*cmp = nc
	}
}
