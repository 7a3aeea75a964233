package verdict

import (
	"math"
	"slices"

	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// What the planner (package plan) reads of the sequential rule to forecast
// it: read here, from the rule's own functions, so that a change to the rule
// moves the forecast with it (plan/stopping.go says what it mirrors).

// SerialMargin is the sequential rule's widening of a comparison's variance
// when its rounds do not read as correlated (sequentialView with a serial
// factor of 1): the margin rule.Diff.Widened takes above the factor's
// estimate.
func SerialMargin() float64 {
	e := rule.Diff{SE: 1}.Widened(1)
	return e.SE * e.SE
}

// LentDF is the degrees of freedom the host's profile lends a comparison
// where tonight's noise agrees with it (combine): its own, at most
// PriorMaxDF; 0 without a usable profile. A sequential look's test takes
// the loan only where it narrows its boundary (LoanNarrows).
func (p *NoisePrior) LentDF() float64 {
	if p == nil || !(p.Var > 0) || !(p.DF > 0) {
		return 0
	}
	return min(p.DF, PriorMaxDF)
}

// LentVar is the variance the profile's loan carries when it is pooled
// with tonight's (combine): its own, PriorSlack times larger.
func (p *NoisePrior) LentVar() float64 {
	if p == nil {
		return 0
	}
	return p.Var * PriorSlack
}

// PlanningView is v as the planner reads it when the verdict decides
// metrics beside throughput (Metrics): each variant's cell at each level
// is, among throughput's comparison and each metric's still open, the one
// that needs the most rounds to close, its round-to-round spread rescaled
// to throughput's tie margin, since the rounds a comparison needs grow as
// (spread / margin)². A plan made against the throughput margin then plans
// for whichever metric binds, and a cell closed in throughput stays open
// while a metric's is. v itself when it has no metrics.
func PlanningView(v *Verdict) *Verdict {
	if len(v.Metrics) == 0 {
		return v
	}
	pv := *v
	pv.Rows = make([]Row, len(v.Rows))
	for i, row := range v.Rows {
		r := row
		r.Cells = slices.Clone(row.Cells)
		for j := range r.Cells {
			c := &r.Cells[j]
			if !c.Compared {
				continue
			}
			for _, mv := range v.Metrics {
				mc := mv.Cell(row.Level, c.Scenario)
				if mc == nil || !mc.Compared || !mc.Open || !(mv.MarginPct > 0) || mc.RoundSDPct <= 0 {
					continue
				}
				m := mc.Comparison
				m.RoundSDPct = 100 * math.Expm1(math.Log1p(m.RoundSDPct/100)*v.EquivalenceMarginPct/mv.MarginPct)
				m.WithinShare = 0 // a percentile has no within-launch samples
				if !c.Open || m.RoundSDPct > c.RoundSDPct {
					c.Comparison = m
				}
			}
		}
		pv.Rows[i] = r
	}
	return &pv
}
