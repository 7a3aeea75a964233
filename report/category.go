package report

import (
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// noCategory names, in tables, the prompts without a category in a set
// where others have one.
const noCategory = "(none)"

func categoryName(c string) string {
	if c == "" {
		return noCategory
	}
	return c
}

func acceptText(al *float64) string {
	if al == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *al)
}

// categoryLines are a level's per-category figures as one indented line
// to follow its detail line (a set has a handful of categories, and a line
// each would bury the levels); none when the prompts have no categories.
// Markdown and verdict.json carry the rest (requests, TPOT).
func categoryLines(l verdict.Level) []string {
	if len(l.Categories) == 0 {
		return nil
	}
	parts := make([]string, len(l.Categories))
	for i, c := range l.Categories {
		parts[i] = fmt.Sprintf("%s %.1f tok/s (%d/%d ok, %.1f tok/s each", categoryName(c.Category), c.Throughput,
			c.OK, c.Requests, c.PerRequestTokS)
		if c.AcceptLength != nil {
			parts[i] += fmt.Sprintf(", accept length %.2f", *c.AcceptLength)
		}
		parts[i] += ")"
	}
	return []string{"          per category: " + strings.Join(parts, " | ")}
}

// categoryTable is a scenario's per-category figures at every level; no
// rows when the prompts have no categories.
func categoryTable(s verdict.Scenario) table {
	t := table{Header: []string{levelHeaderOf(s.Levels), "category", "requests", "ok", "tok/s", "per-req tok/s", "TPOT p50 ms", "accept length"}}
	for _, l := range s.Levels {
		for _, c := range l.Categories {
			t.Rows = append(t.Rows, []string{
				measure.LevelLabel(l.Level), categoryName(c.Category), fmt.Sprint(c.Requests), fmt.Sprintf("%d/%d", c.OK, c.Requests),
				fmt.Sprintf("%.1f", c.Throughput), fmt.Sprintf("%.1f", c.PerRequestTokS), fmt.Sprintf("%.1f", c.TPOTP50*1e3),
				acceptText(c.AcceptLength),
			})
		}
	}
	return t
}
