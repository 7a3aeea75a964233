package report

import (
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// sessionLine is a level's multi-turn figures as one indented line to
// follow its detail line: how many sessions ran and how long, and the TTFT
// p50 of each turn index, where a prefix cache shows, with the share of
// the prompt it served. Empty for a level of single requests; verdict.json
// carries the rest (the distributions, prompt lengths).
func sessionLine(l verdict.Level) string {
	s := l.Sessions
	if s == nil {
		return ""
	}
	turns := make([]string, len(s.ByTurn))
	for i, t := range s.ByTurn {
		turns[i] = fmt.Sprintf("%d: %s", t.Turn, ms(t.TTFT.P50))
		if t.CachedShare != nil {
			turns[i] += fmt.Sprintf(" (%.0f%% cached)", *t.CachedShare*100)
		}
	}
	return fmt.Sprintf("          sessions: %d (%d without a failed turn), %.1f turns, %.2f s each (p50); TTFT p50 by turn %s",
		s.Sessions, s.Completed, s.TurnsMean, s.Duration.P50, strings.Join(turns, " | "))
}

// ms writes seconds as milliseconds, with a decimal below 10.
func ms(sec float64) string {
	if sec*1e3 < 10 {
		return fmt.Sprintf("%.1f ms", sec*1e3)
	}
	return fmt.Sprintf("%.0f ms", sec*1e3)
}
