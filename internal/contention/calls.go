package contention

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Call is a difference a verdict declares between two scenarios at one
// level: among identical servers, a false one.
type Call struct {
	Level string
	// Scenario is the one declared faster or slower than Against.
	Scenario, Against string
	// Outcome is verdict.OutcomeFaster or verdict.OutcomeSlower; for a
	// row's winner, faster (than every other scenario of the row).
	Outcome string
	// DeltaPct and PAdjusted are the comparison's, for a variant against
	// the baseline; zero for a row's winner.
	DeltaPct, PAdjusted float64
}

func (c Call) String() string {
	if c.Against == "" {
		return fmt.Sprintf("%s: %s wins the row", c.Level, c.Scenario)
	}
	return fmt.Sprintf("%s: %s %s than %s, %+.1f%% (p_adj=%.3f)", c.Level, c.Scenario, c.Outcome, c.Against, c.DeltaPct, c.PAdjusted)
}

// Calls lists every difference v declares: each variant found faster or
// slower than the baseline at a level, and each row with a winner, which
// also compares the variants with each other (a row's winner is faster,
// corrected, than every other scenario of the row).
func Calls(v *verdict.Verdict) []Call {
	var out []Call
	for _, row := range v.Rows {
		level := row.Level.String()
		for _, c := range row.Cells {
			if c.Compared && (c.Outcome == verdict.OutcomeFaster || c.Outcome == verdict.OutcomeSlower) {
				out = append(out, Call{Level: level, Scenario: c.Scenario, Against: v.Baseline, Outcome: c.Outcome,
					DeltaPct: c.DeltaPct, PAdjusted: c.PAdjusted})
			}
		}
		if row.Winner != "" {
			out = append(out, Call{Level: level, Scenario: row.Winner, Outcome: verdict.OutcomeFaster})
		}
	}
	return out
}

// Doubted counts the comparisons with the baseline that v leaves
// undecided because it doubts a side's measurement (verdict.OutcomeDoubted:
// the load generator set the pace, say), and all of them.
func Doubted(v *verdict.Verdict) (doubted, compared int) {
	for _, row := range v.Rows {
		for _, c := range row.Cells {
			if !c.Compared {
				continue
			}
			compared++
			if c.Outcome == verdict.OutcomeDoubted {
				doubted++
			}
		}
	}
	return doubted, compared
}
