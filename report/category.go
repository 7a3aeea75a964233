package report

import (
	"fmt"

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

// categoryLines are a level's per-category figures, one indented line
// each, to follow its detail line; none when the prompts have no
// categories.
func categoryLines(l verdict.Level) []string {
	var out []string
	for _, c := range l.Categories {
		out = append(out, fmt.Sprintf("        %-12s | %d requests | throughput: %7.1f tok/s | per-req: %6.1f tok/s | TPOT p50: %6.1fms | accept length: %s | ok: %d/%d",
			categoryName(c.Category), c.Requests, c.Throughput, c.PerRequestTokS, c.TPOTP50*1e3, acceptText(c.AcceptLength), c.OK, c.Requests))
	}
	return out
}

// categoryTable is a scenario's per-category figures at every level; no
// rows when the prompts have no categories.
func categoryTable(s verdict.Scenario) table {
	t := table{Header: []string{"C", "category", "requests", "ok", "tok/s", "per-req tok/s", "TPOT p50 ms", "accept length"}}
	for _, l := range s.Levels {
		for _, c := range l.Categories {
			t.Rows = append(t.Rows, []string{
				fmt.Sprint(l.Level), categoryName(c.Category), fmt.Sprint(c.Requests), fmt.Sprintf("%d/%d", c.OK, c.Requests),
				fmt.Sprintf("%.1f", c.Throughput), fmt.Sprintf("%.1f", c.PerRequestTokS), fmt.Sprintf("%.1f", c.TPOTP50*1e3),
				acceptText(c.AcceptLength),
			})
		}
	}
	return t
}
