package notes

import (
	"fmt"
	"math"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// priorNote says what the prior did over the run's comparisons: used,
// refused for some, or not given.
func priorNote(v *verdict.Verdict) []verdict.Note {
	p := v.Prior
	if p == nil {
		return nil
	}
	agreed, refused := 0, 0
	worst := 0.0
	for _, u := range v.PriorUses() {
		if u.Agreed {
			agreed++
		} else {
			refused++
			worst = math.Max(worst, u.Ratio)
		}
	}
	head := fmt.Sprintf("noise profile of %s (round sd %.2f%%, %.0f df from %d runs)",
		p.Source, 100*math.Sqrt(p.Var), p.DF, len(p.Runs))
	switch {
	case agreed+refused == 0:
		return []verdict.Note{{Severity: verdict.SeverityInfo, Check: verdict.CheckPrior, Text: head + ": no comparison had two rounds to test it against, so it was not used"}}
	case refused == 0:
		// A sequential rule takes the loan only for the tests and
		// intervals whose boundary it narrows (verdict.LoanNarrows): the
		// first looks, in practice.
		where := "every comparison"
		if v.Sequential != nil {
			where = "each look's tests where it narrows their boundary"
		}
		return []verdict.Note{{Severity: verdict.SeverityInfo, Check: verdict.CheckPrior, Text: fmt.Sprintf(
			"%s: tonight's noise agreed with it in all %d pairs of scenarios, so it lent up to %.0f df (its variance taken %.2f× larger) to %s", head, agreed, verdict.PriorMaxDF, verdict.PriorSlack, where)}}
	}
	return []verdict.Note{{Severity: verdict.SeverityWarn, Check: verdict.CheckPrior, Text: fmt.Sprintf(
		"%s: tonight was noisier in %d of %d pairs of scenarios (variance up to %.1f× the profile's), so those were judged on tonight's noise alone; the host may have changed",
		head, refused, agreed+refused, worst)}}
}
