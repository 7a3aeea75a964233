package report

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Where says where a run's files are, for the last lines of End: the
// report to open and how to see what the end leaves out. Empty fields are
// not printed.
type Where struct {
	// RunDir is the run directory as the user should type it.
	RunDir string
	// Page is the HTML report, when it was written.
	Page string
	// Status are lines about how the run ended (stopped, out of time, how
	// to resume), shown above the paths: what to do next belongs with the
	// answer, not above the table.
	Status []string
}

// End writes what the last screen of a run shows, in this order and
// nothing after: a line per kind of note (what the run checked, counted),
// the verdict table with its legend (and, when the run was too noisy to
// tie anything, a line that says so with the host's load), the per-variant
// sentences (the sequential rounds, crossovers, why, break-even,
// capacity), the cost line and where the report is. Every line fits width
// columns (0: DefaultWidth): the table picks the layout that fits, prose is
// folded. The notes in full, the per-level figures, categories, energy and
// accept lengths are in Text, the detail, which the last line says how to
// print.
func End(w io.Writer, v *verdict.Verdict, width int, where Where) error {
	if width <= 0 {
		width = DefaultWidth
	}
	ew := &errWriter{w: w}
	line := func(s string) { fmt.Fprintln(ew, s) }
	prose := func(s, first, rest string) {
		for _, l := range fold(s, width, first, rest) {
			line(l)
		}
	}
	prose(fmt.Sprintf("%s %s, baseline %s: what the run checked", v.Campaign, v.Run, v.Baseline), "", "  ")
	for _, c := range checkedLines(v) {
		mark := noteMark(verdict.Note{Severity: c.Severity})
		prose(c.Text, "  "+mark, "     ")
	}
	line("")
	if err := writeVerdictTable(ew, v, width); err != nil {
		return err
	}
	prose(legend(v), "", "  ")
	if hasHopeless(v) {
		prose(hopelessFootnote, "", "  ")
	}
	if s := untiedLine(v); s != "" {
		prose(s, "", "  ")
	}
	if lines := sequentialVariantLines(v); len(lines) > 0 {
		line("")
		prose(sequentialHeading(v)+":", "", "  ")
		for _, l := range lines {
			prose(l, "  ", "    ")
		}
	}
	if len(v.Crossovers) > 0 {
		line("")
		for _, x := range v.Crossovers {
			prose(x.Sentence, "", "  ")
			for _, l := range turnLines(x) {
				prose(l, "  ", "    ")
			}
		}
	}
	if len(v.Metrics) > 0 && ew.err == nil {
		ew.err = writeMetrics(ew, v, width)
	}
	if v.Selection != nil && ew.err == nil {
		ew.err = writeSelection(ew, v, width)
	}
	if lines := capacityLines(v); len(lines) > 0 {
		line("")
		prose(capacityHeading(v)+":", "", "  ")
		for _, l := range lines {
			prose(l, "  ", "    ")
		}
	}
	if v.Cost != nil {
		line("")
		prose("Cost: "+v.Cost.Sentence, "", "  ")
	}
	if len(where.Status) > 0 {
		line("")
		for _, s := range where.Status {
			prose(s, "", "  ")
		}
	}
	if where.RunDir != "" || where.Page != "" {
		line("")
	}
	if where.RunDir != "" {
		prose("Results: "+where.RunDir, "", "  ")
	}
	if where.Page != "" {
		prose("Report:  "+where.Page, "", "  ")
	}
	if where.RunDir != "" {
		// Every note in full, each level's figures, energy and where the
		// time went: what this end leaves out.
		cmd := "bakeoff report " + campaign.ShellQuote(where.RunDir) + " --format text --detail"
		if utf8.RuneCountInString("Details: "+cmd) <= width {
			line("Details: " + cmd)
		} else {
			// A command folded at its spaces cannot be pasted: on a line
			// of its own it fits more often.
			line("Details:")
			prose(cmd, "  ", "  ")
		}
	}
	return ew.err
}
