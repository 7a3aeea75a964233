package report

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// sequentialHeading introduces the lines of a sequential campaign.
func sequentialHeading(v *verdict.Verdict) string {
	return fmt.Sprintf("Sequential rounds (%d to %d): each variant stopped when every comparison with the baseline was decided",
		v.Sequential.MinRounds, v.Sequential.MaxRounds)
}

// sequentialLines say, per variant of a sequential campaign, how many
// rounds it took, its GPU-hours, and why it stopped or went on, then what
// the whole answer cost; nil under a fixed design.
func sequentialLines(v *verdict.Verdict) []string {
	out := sequentialVariantLines(v)
	if out != nil && v.Cost != nil {
		out = append(out, v.Cost.Sentence)
	}
	return out
}

// sequentialVariantLines are sequentialLines without the cost: the end of
// a run gives the cost a line of its own, under a fixed design too.
func sequentialVariantLines(v *verdict.Verdict) []string {
	// A race's launches follow the race, not the comparisons with the
	// baseline: its picture (writeSelection) says when each left.
	if v.Sequential == nil || v.Selection != nil {
		return nil
	}
	var out []string
	stops := v.LaunchStops()
	for i, vs := range v.Sequential.Variants {
		rounds, reason := vs.Rounds, vs.Reason
		if ls := stops[i]; vs.Stopped && (!ls.Stopped || ls.StoppedAfter > vs.StoppedAfter) {
			// A metric the verdict decides beside throughput kept it
			// launching: the rounds are those it was launched for.
			if ls.Stopped {
				rounds = ls.StoppedAfter
				reason += fmt.Sprintf("; launched to round %d for its metrics (below)", ls.StoppedAfter)
			} else {
				rounds = max(rounds, v.RoundsCompleted)
				reason += "; still launched for its metrics (below)"
			}
		}
		line := fmt.Sprintf("%s: %d rounds", vs.Variant, rounds)
		if v.Cost != nil {
			for _, sc := range v.Cost.Scenarios {
				if h := v.Cost.GPUHours(sc); sc.Scenario == vs.Variant && h > 0 {
					line += fmt.Sprintf(", %.1f GPU-hours", h)
				}
			}
		}
		out = append(out, line+"; "+reason)
	}
	return out
}
