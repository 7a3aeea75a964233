package report

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter/renderer"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Markdown writes the verdict for pasting into a pull request or a chat:
// the same content as Text, as Markdown.
func Markdown(w io.Writer, v *verdict.Verdict) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "## %s: verdict (%s)\n\n", v.Campaign, v.Run)
	fmt.Fprintf(ew, "Baseline **%s**; throughput is the geometric mean of the launches' steady-state throughput ± its %.0f%% confidence interval.\n\n",
		v.Baseline, 100*v.Confidence)
	fmt.Fprintf(ew, "%s.\n\n", roundsLine(v))
	for _, e := range v.Engines {
		fmt.Fprintf(ew, "Engine: %s.\n\n", e)
	}
	if len(v.Notes) > 0 {
		fmt.Fprintln(ew, "### Fairness")
		fmt.Fprintln(ew)
		for _, n := range v.Notes {
			mark := map[string]string{verdict.SeverityRed: "🔴", verdict.SeverityWarn: "⚠️", verdict.SeverityInfo: "✅"}[n.Severity]
			fmt.Fprintf(ew, "- %s %s\n", mark, n.Text)
		}
		fmt.Fprintln(ew)
	}
	fmt.Fprintln(ew, "### Throughput (output tok/s)")
	fmt.Fprintln(ew)
	if err := renderTable(ew, sideBySide(v), renderer.NewMarkdown()); err != nil {
		return err
	}
	fmt.Fprintln(ew)
	fmt.Fprintln(ew, legend(v))
	if hasHopeless(v) {
		fmt.Fprintln(ew)
		fmt.Fprintln(ew, hopelessFootnote)
	}
	if lines := sequentialLines(v); len(lines) > 0 {
		fmt.Fprintf(ew, "\n### Sequential rounds\n\n%s.\n\n", sequentialHeading(v))
		for _, line := range lines {
			fmt.Fprintf(ew, "- %s\n", line)
		}
	}
	if len(v.Crossovers) > 0 {
		fmt.Fprintln(ew)
		fmt.Fprintln(ew, "### Crossovers")
		fmt.Fprintln(ew)
		for _, x := range v.Crossovers {
			fmt.Fprintf(ew, "- %s\n", x.Sentence)
			for _, line := range turnLines(x) {
				fmt.Fprintf(ew, "  - %s\n", line)
			}
		}
	}
	if lines := capacityLines(v); len(lines) > 0 {
		fmt.Fprintln(ew)
		fmt.Fprintln(ew, "### Capacity under the SLO")
		fmt.Fprintln(ew)
		fmt.Fprintf(ew, "%s.\n\n", capacityHeading(v))
		for _, line := range lines {
			fmt.Fprintf(ew, "- %s\n", line)
		}
	}
	if al := acceptLengths(v); len(al) > 0 {
		fmt.Fprintln(ew)
		fmt.Fprintln(ew, "### Speculative accept length")
		fmt.Fprintln(ew)
		for _, line := range al {
			fmt.Fprintf(ew, "- %s\n", line)
		}
	}
	for _, s := range v.Scenarios {
		fmt.Fprintf(ew, "\n### %s%s\n\n", s.Name, fromEarlier(s))
		if s.Failed() {
			fmt.Fprintf(ew, "Failed in phase %s: %s\n", s.FailedPhase, verdict.FirstLine(s.Reason))
			continue
		}
		if line := lengthsLine(s); line != "" {
			fmt.Fprintf(ew, "⚠️ %s.\n\n", line)
		}
		if err := renderTable(ew, detailTable(v.Percentiles, s), renderer.NewMarkdown()); err != nil {
			return err
		}
		if st := sloTable(s); len(st.Rows) > 0 {
			fmt.Fprintf(ew, "\nAgainst the SLO:\n\n")
			if err := renderTable(ew, st, renderer.NewMarkdown()); err != nil {
				return err
			}
		}
		if ct := categoryTable(s); len(ct.Rows) > 0 {
			fmt.Fprintf(ew, "\nPer prompt category:\n\n")
			if err := renderTable(ew, ct, renderer.NewMarkdown()); err != nil {
				return err
			}
		}
		if tt := turnTable(s); len(tt.Rows) > 0 {
			fmt.Fprintf(ew, "\n%s\n\n", sessionsCaption)
			if err := renderTable(ew, tt, renderer.NewMarkdown()); err != nil {
				return err
			}
		}
	}
	return ew.err
}

// detailTable is a scenario's per-level figures as a grid: its columns
// (levelColumnsAt) but the per-round ones.
func detailTable(ps []float64, s verdict.Scenario) table {
	cols := columnsOf(ps, &s, false)
	t := table{Header: []string{levelHeaderOf(s.Levels)}}
	for _, c := range cols {
		t.Header = append(t.Header, c.Head)
	}
	for i := range s.Levels {
		l := &s.Levels[i]
		r := []string{measure.LevelLabel(l.Level)}
		for _, c := range cols {
			r = append(r, c.text(l))
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}
