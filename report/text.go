package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Text writes the terminal report: the fairness notes (above the table, so
// they are read first), the verdict table, the crossover sentences, the
// capacity, energy, the Pareto-optimal points, the accept lengths, and a
// detailed block per scenario. Its table fits
// DefaultWidth columns.
func Text(w io.Writer, v *verdict.Verdict) error { return TextWidth(w, v, DefaultWidth) }

// TextWidth is Text with a verdict table that fits width columns, a
// terminal's (0: DefaultWidth).
func TextWidth(w io.Writer, v *verdict.Verdict, width int) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s %s: baseline %s, alpha %v, throughput: geometric mean of the launches' steady-state throughput ± %.0f%% CI\n",
		v.Campaign, v.Run, v.Baseline, v.Alpha, 100*v.Confidence)
	fmt.Fprintf(ew, "%s\n", roundsLine(v))
	for _, e := range v.Engines {
		fmt.Fprintf(ew, "engine: %s\n", e)
	}
	for _, s := range kvOverTCP(v) {
		fmt.Fprintf(ew, "kv transfer: %s's KV cache went over TCP, not RDMA (the note below)\n", s)
	}
	fmt.Fprintln(ew)
	if len(v.Notes) > 0 {
		fmt.Fprintln(ew, "Fairness:")
		for _, n := range v.Notes {
			fmt.Fprintf(ew, "  %s%s\n", noteMark(n), n.Text)
		}
		fmt.Fprintln(ew)
	}
	if err := writeVerdictTable(ew, v, width); err != nil {
		return err
	}
	fmt.Fprintln(ew, legend(v))
	if hasHopeless(v) {
		fmt.Fprintln(ew, hopelessFootnote)
	}
	if s := untiedLine(v); s != "" {
		fmt.Fprintln(ew, s)
	}
	if lines := sequentialLines(v); len(lines) > 0 {
		fmt.Fprintf(ew, "\n%s:\n", sequentialHeading(v))
		for _, line := range lines {
			fmt.Fprintln(ew, "  "+line)
		}
	}
	if len(v.Crossovers) > 0 {
		fmt.Fprintln(ew)
		for _, x := range v.Crossovers {
			fmt.Fprintln(ew, x.Sentence)
			for _, line := range turnLines(x) {
				fmt.Fprintln(ew, "  "+line)
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
		fmt.Fprintf(ew, "\n%s:\n", capacityHeading(v))
		for _, line := range lines {
			fmt.Fprintln(ew, line)
		}
	}
	if et := energyTable(v); et != nil {
		fmt.Fprintln(ew, "\nGPU energy per 1000 output tokens (mean GPU power), over the steady-state windows:")
		if err := renderTable(ew, *et, nil); err != nil {
			return err
		}
	}
	if pt := paretoTable(v); pt != nil {
		fmt.Fprintf(ew, "\n%s\n", paretoHeading(v.Pareto))
		if err := renderTable(ew, *pt, nil); err != nil {
			return err
		}
	}
	if al := acceptLengths(v); len(al) > 0 {
		fmt.Fprintln(ew)
		for _, line := range al {
			fmt.Fprintln(ew, line)
		}
	}
	for _, s := range v.Scenarios {
		fmt.Fprintf(ew, "\n%s%s", s.Name, fromEarlier(s))
		if s.Failed() {
			fmt.Fprintf(ew, ": failed (%s)\n", verdict.FirstLine(s.Reason))
			continue
		}
		fmt.Fprintln(ew)
		if line := lengthsLine(s); line != "" {
			fmt.Fprintf(ew, "  %s\n", line)
		}
		lines := detailLines(v.Percentiles, s)
		for i, l := range s.Levels {
			fmt.Fprintln(ew, lines[i])
			if line := sloLine(l); line != "" {
				fmt.Fprintln(ew, line)
			}
			for _, line := range categoryLines(l) {
				fmt.Fprintln(ew, line)
			}
			if line := sessionLine(l); line != "" {
				fmt.Fprintln(ew, line)
			}
		}
		for _, line := range cutLines(s) {
			fmt.Fprintln(ew, line)
		}
	}
	return ew.err
}

// renderTable draws t with tablewriter; r picks the renderer (nil: the
// default box drawing).
func renderTable(w io.Writer, t table, r tw.Renderer) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		// A cell's own padding aligns it with the cells of other tables
		// (alignBlocks); no cell has spaces around it otherwise.
		tablewriter.WithTrimSpace(tw.Off),
	}
	if r != nil {
		opts = append(opts, tablewriter.WithRenderer(r))
	} else {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})))
	}
	tb := tablewriter.NewTable(w, opts...)
	tb.Header(anySlice(t.Header)...)
	for _, row := range t.Rows {
		if err := tb.Append(row); err != nil {
			return fmt.Errorf("rendering table: %w", err)
		}
	}
	if err := tb.Render(); err != nil {
		return fmt.Errorf("rendering table: %w", err)
	}
	return nil
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// errWriter keeps the first write error so a renderer checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// fromEarlier tells, after a scenario's name, that its figures come from an
// earlier attempt than its newest, which did not complete.
func fromEarlier(s verdict.Scenario) string {
	if s.Newest == nil {
		return ""
	}
	what := "did not finish"
	if s.Newest.Status == results.StatusFailed {
		what = "failed"
	}
	return fmt.Sprintf(" (attempt %d, %s; the newest attempt %d %s)", s.Attempt, s.Dir, s.Newest.Attempt, what)
}

// kvOverTCP are the disaggregated scenarios whose KV cache went over TCP
// (a CheckKVTransfer note): said in the header too, since it is a fact of
// the host that every TTFT of theirs carries.
func kvOverTCP(v *verdict.Verdict) []string {
	var out []string
	for _, n := range v.Notes {
		if n.Check == verdict.CheckKVTransfer && !slices.Contains(out, n.Scenario) {
			out = append(out, n.Scenario)
		}
	}
	return out
}
