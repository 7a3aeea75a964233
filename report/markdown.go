package report

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter/renderer"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Markdown writes the verdict for a pull request or a chat, where the
// first screen is all most readers see: the table and the per-variant
// sentences first, then the cost, the energy table, the Pareto-optimal
// points (a handful of rows, where the plot is not) and the accept lengths,
// the problems that make a comparison wrong (a failed scenario), and the
// notes folded in a <details> block. Each level's figures are left to the
// page, verdict.txt and summary.csv: a table per scenario and category made
// the demo's file 336 lines long.
func Markdown(w io.Writer, v *verdict.Verdict) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "## %s: verdict (%s)\n\n", v.Campaign, v.Run)
	fmt.Fprintf(ew, "Baseline **%s**; throughput (output tok/s) is the geometric mean of the launches' steady-state throughput ± its %.0f%% confidence interval; %s.\n\n",
		v.Baseline, 100*v.Confidence, roundsLine(v))
	if line := v.PerGPULine(); line != "" {
		fmt.Fprintf(ew, "%s.\n\n", line)
	}
	if err := renderTable(ew, sideBySide(v, true), renderer.NewMarkdown()); err != nil {
		return err
	}
	fmt.Fprintln(ew)
	fmt.Fprintln(ew, legend(v))
	if hasHopeless(v) {
		fmt.Fprintln(ew)
		fmt.Fprintln(ew, hopelessFootnote)
	}
	if s := untiedLine(v); s != "" {
		fmt.Fprintln(ew)
		fmt.Fprintln(ew, s)
	}
	if lines := sequentialVariantLines(v); len(lines) > 0 {
		fmt.Fprintf(ew, "\n%s:\n\n", sequentialHeading(v))
		for _, line := range lines {
			fmt.Fprintf(ew, "- %s\n", line)
		}
	}
	if len(v.Crossovers) > 0 {
		fmt.Fprintln(ew)
		for _, x := range v.Crossovers {
			fmt.Fprintf(ew, "- %s\n", x.Sentence)
			for _, line := range turnLines(x) {
				fmt.Fprintf(ew, "  - %s\n", line)
			}
		}
	}
	for _, mv := range v.Metrics {
		fmt.Fprintf(ew, "\n%s\n\n", metricHeading(mv))
		if err := renderTable(ew, sideBySideIn(metricVerdictOf(v, mv), mv.Unit, true), renderer.NewMarkdown()); err != nil {
			return err
		}
		fmt.Fprintln(ew)
		for _, line := range append(metricSentences(v, mv), keptOpen(v, mv)...) {
			fmt.Fprintf(ew, "- %s\n", line)
		}
	}
	if res := v.Selection; res != nil {
		fmt.Fprintf(ew, "\n%s\n\n", selectionHeading(res))
		if err := renderTable(ew, selectionTable(res), renderer.NewMarkdown()); err != nil {
			return err
		}
		fmt.Fprintln(ew)
		for _, line := range policyLines(v) {
			fmt.Fprintf(ew, "- %s\n", line)
		}
		fmt.Fprintf(ew, "\nThe race, a column per round (■ launched, c confirmation):\n\n```\n%s\n```\n", strings.Join(raceLines(res, v.Rounds), "\n"))
	}
	if lines := capacityLines(v); len(lines) > 0 {
		fmt.Fprintf(ew, "\n%s:\n\n", capacityHeading(v))
		for _, line := range lines {
			fmt.Fprintf(ew, "- %s\n", line)
		}
	}
	if v.Cost != nil {
		fmt.Fprintf(ew, "\n**Cost:** %s.\n", v.Cost.Sentence)
	}
	if et := energyTable(v); et != nil {
		fmt.Fprintln(ew, "\nGPU energy per 1000 output tokens (mean GPU power), over the steady-state windows:")
		fmt.Fprintln(ew)
		if err := renderTable(ew, *et, renderer.NewMarkdown()); err != nil {
			return err
		}
	}
	if pt := paretoTable(v); pt != nil {
		fmt.Fprintf(ew, "\n%s\n\n", paretoHeading(v.Pareto))
		if err := renderTable(ew, *pt, renderer.NewMarkdown()); err != nil {
			return err
		}
	}
	if al := acceptLengths(v); len(al) > 0 {
		fmt.Fprintln(ew)
		for _, line := range al {
			fmt.Fprintf(ew, "- %s\n", line)
		}
	}
	markdownNotes(ew, v)
	fmt.Fprintln(ew, "\nEach level's figures: `report/index.html`, `verdict.txt` and `summary.csv` in the run directory.")
	return ew.err
}

// noteEmoji marks a note by its severity in Markdown.
var noteEmoji = map[string]string{verdict.SeverityRed: "🔴", verdict.SeverityWarn: "⚠️", verdict.SeverityInfo: "✅"}

// markdownNotes writes the problems, which make a comparison wrong and are
// shown, then every note (those of one kind about many levels as one item,
// noteItems) and the engines folded in a <details> block whose summary
// counts them.
func markdownNotes(w io.Writer, v *verdict.Verdict) {
	count := map[string]int{}
	for _, n := range v.Notes {
		count[n.Severity]++
		if n.Severity == verdict.SeverityRed {
			fmt.Fprintf(w, "\n%s %s\n", noteEmoji[n.Severity], n.Text)
		}
	}
	if len(v.Notes) == 0 && len(v.Engines) == 0 {
		return
	}
	var parts []string
	if n := count[verdict.SeverityRed]; n > 0 {
		parts = append(parts, nouns(n, "problem", "problems"))
	}
	if n := count[verdict.SeverityWarn]; n > 0 {
		parts = append(parts, nouns(n, "warning", "warnings"))
	}
	if n := count[verdict.SeverityInfo]; n > 0 {
		parts = append(parts, nouns(n, "check", "checks")+" passed")
	}
	summary := "What the run checked"
	if len(parts) > 0 {
		summary += ": " + strings.Join(parts, ", ")
	}
	// GitHub renders Markdown inside <details> only after a blank line.
	fmt.Fprintf(w, "\n<details><summary>%s</summary>\n\n", html.EscapeString(summary))
	for _, n := range noteItems(v) {
		fmt.Fprintf(w, "- %s %s\n", noteEmoji[n.Severity], n.Text)
	}
	for _, e := range v.Engines {
		fmt.Fprintf(w, "- engine: %s\n", e)
	}
	fmt.Fprintln(w, "\n</details>")
}
