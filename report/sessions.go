package report

import (
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
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

// turnTable is a scenario's multi-turn figures per level and turn index,
// the text report's "TTFT p50 by turn" line as a grid: how many requests
// each turn sent, their TTFT, the prompt length the history grew to, and
// the share of it the server's prefix cache served. No rows for a level of
// single requests.
func turnTable(s verdict.Scenario) table {
	t := table{Header: []string{levelHeaderOf(s.Levels), "turn", "requests", "ok", "TTFT p50", "TTFT p99", "prompt tokens", "cached"}}
	for _, l := range s.Levels {
		if l.Sessions == nil {
			continue
		}
		for _, tr := range l.Sessions.ByTurn {
			cached := "-"
			if tr.CachedShare != nil {
				cached = fmt.Sprintf("%.0f%%", *tr.CachedShare*100)
			}
			t.Rows = append(t.Rows, []string{measure.LevelLabel(l.Level), fmt.Sprint(tr.Turn), fmt.Sprint(tr.Requests),
				fmt.Sprintf("%d/%d", tr.OK, tr.Requests), ms(tr.TTFT.P50), ms(tr.TTFT.P99), fmt.Sprintf("%.0f", tr.PromptTokensMean), cached})
		}
	}
	return t
}

// sessionsCaption introduces the per-turn table in Markdown and HTML.
const sessionsCaption = "Per turn of the sessions (every turn resends the history; cached: the share of the prompt the server's prefix cache served):"
