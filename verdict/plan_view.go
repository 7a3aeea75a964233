package verdict

import "github.com/bakeoff-dev/bakeoff/verdict/rule"

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
// at every look where tonight's noise agrees with it (combine): its own,
// at most PriorMaxDF; 0 without a usable profile.
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
