// Package report renders a verdict: the side-by-side terminal table, a
// Markdown verdict for a pull request, CSV, JSON, the Go benchmark text
// format that benchstat reads, and plots; and it compares two runs (diff).
// Every renderer is a pure function of a verdict.Verdict, which is itself a
// pure function of a run directory.
package report

import (
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// table is a rendered-to-strings grid: the model every table renderer draws.
type table struct {
	Header []string
	Rows   [][]string
}

// sideBySide is the main table: one row per level, per scenario its
// throughput ± CI and, for variants, the delta against the baseline with its
// significance, then the winner.
func sideBySide(v *verdict.Verdict) table {
	t := table{Header: []string{"C"}}
	for _, s := range v.Scenarios {
		if s.Failed() {
			continue
		}
		t.Header = append(t.Header, s.Name+" tok/s")
		if s.Name != v.Baseline {
			t.Header = append(t.Header, "vs "+v.Baseline)
		}
	}
	t.Header = append(t.Header, "winner")
	for _, row := range v.Rows {
		r := []string{fmt.Sprint(row.Level)}
		for i, s := range v.Scenarios {
			if s.Failed() {
				continue
			}
			c := row.Cells[i]
			r = append(r, throughputCell(c))
			if s.Name != v.Baseline {
				r = append(r, deltaCell(c))
			}
		}
		r = append(r, winnerCell(row))
		t.Rows = append(t.Rows, r)
	}
	return t
}

func throughputCell(c verdict.Cell) string {
	if !c.Present {
		return "-"
	}
	return estimate(c.Throughput)
}

// estimate is "773.1 ±1.2%": the center and the half-width of its interval.
func estimate(e verdict.Estimate) string {
	return fmt.Sprintf("%.1f ±%s", e.Center, halfWidth(e))
}

func halfWidth(e verdict.Estimate) string {
	h := e.HalfWidthPct()
	if h < 10 {
		return fmt.Sprintf("%.1f%%", h)
	}
	return fmt.Sprintf("%.0f%%", h)
}

// deltaCell is benchstat's delta: "~" when not significant, else the
// percentage; the p-value and sample counts follow.
func deltaCell(c verdict.Cell) string {
	if !c.Compared {
		return "-"
	}
	mark := "~"
	if c.Significant {
		mark = verdict.Pct(c.DeltaPct)
	}
	s := fmt.Sprintf("%s (%s)", mark, verdict.PClause(c.P))
	if c.Hopeless {
		s += " ¹"
	}
	return s
}

func winnerCell(r verdict.Row) string {
	switch {
	case r.Winner != "":
		return r.Winner
	case len(r.Tied) > 0:
		return "~ (" + strings.Join(r.Tied, " ~ ") + ")"
	}
	return "-"
}

// hasHopeless reports whether any cell carries the "too few samples" mark.
func hasHopeless(v *verdict.Verdict) bool {
	for _, r := range v.Rows {
		for _, c := range r.Cells {
			if c.Hopeless {
				return true
			}
		}
	}
	return false
}

const hopelessFootnote = "¹ too few samples to ever reach significance at this level"

// acceptLengths lists the speculative scenarios' accept lengths, overall
// and per level, one line each.
func acceptLengths(v *verdict.Verdict) []string {
	var out []string
	for _, s := range v.Scenarios {
		var parts []string
		for _, l := range s.Levels {
			if l.AcceptLength != nil {
				parts = append(parts, fmt.Sprintf("C=%d %.2f", l.Level, *l.AcceptLength))
			}
		}
		if s.AcceptLength == nil && len(parts) == 0 {
			continue
		}
		line := s.Name + ": accept length"
		if s.AcceptLength != nil {
			line += fmt.Sprintf(" %.2f", *s.AcceptLength)
		}
		if len(parts) > 0 {
			line += " (" + strings.Join(parts, ", ") + ")"
		}
		out = append(out, line)
	}
	return out
}

// noteMark is the prefix a note gets in plain text.
func noteMark(n verdict.Note) string {
	switch n.Severity {
	case verdict.SeverityRed:
		return "!! "
	case verdict.SeverityWarn:
		return "!  "
	}
	return "ok "
}

// detailLine is one level of one scenario in the seeds' line format,
// extended with TTFT and TPOT.
func detailLine(l verdict.Level) string {
	return fmt.Sprintf("  C=%3d | %d requests | throughput: %7.1f tok/s ±%s | per-req: %6.1f tok/s | latency avg/p50/p99: %6.1f/%6.1f/%6.1fs | TTFT p50/p99: %6.3f/%6.3fs | TPOT p50/p99: %6.1f/%6.1fms | ok: %d/%d",
		l.Level, l.Requests, l.Throughput.Center, halfWidth(l.Throughput), l.PerRequest.Mean,
		l.Latency.Mean, l.Latency.P50, l.Latency.P99, l.TTFT.P50, l.TTFT.P99,
		l.TPOT.P50*1e3, l.TPOT.P99*1e3, l.OK, l.Requests)
}
