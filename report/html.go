package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// HTMLFile is the one-file report WriteAll writes: the verdict table, the
// sentences, the notes, each level's figures per launch and the plots,
// with its styles and plots inline, so it opens offline, on a phone, and
// prints.
const HTMLFile = "index.html"

//go:embed html.tmpl
var htmlSource string

// htmlTemplate is parsed on first use: every bakeoff process links this
// package, and most (sweeps, sims) never write a page.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(htmlSource))
})

// HTML writes the report as one self-contained HTML page: no script, no
// network; the plots are the same plots as the SVG files, inline.
//
// Every number shown sits in an element that names what it is, for tests
// and for scripts that read the page: data-field (the figure, e.g.
// "throughput", "delta", "launch-throughput"), data-scenario, data-level,
// data-round where it is one launch's, and data-value (the exact value in
// verdict.json, before rounding for display). Rows carry data-level,
// verdict cells data-outcome, and each part of the page has a stable id
// (notes, verdict, sentences, plots, detail-NAME). A new figure per level
// is an entry in levelColumnsAt (columns.go), which every renderer shows; a
// new kind of sentence is a section in sentenceSections; a new plot is an
// entry in plotBuilders, which the page shows in order.
func HTML(w io.Writer, v *verdict.Verdict) error {
	page, err := htmlPage(v)
	if err != nil {
		return err
	}
	if err := htmlTemplate().Execute(w, page); err != nil {
		return fmt.Errorf("writing HTML: %w", err)
	}
	return nil
}

// hPage is what the template draws.
type hPage struct {
	Title      string
	V          *verdict.Verdict
	Intro      []string
	Notes      []hNote
	NoteCounts []hNoteCount
	// Red are the red notes, repeated above the verdict table.
	Red     []hNote
	Verdict hTable
	// Energy is the energy table, when power was read.
	Energy *hTable
	// Metrics are the verdict's metrics beside throughput, a section each.
	Metrics  []hMetric
	Legend   []string
	Sections []hSection
	Plots    []hPlot
	// Levels are each level's plots: the latency distributions.
	Levels []hLevelPlots
	// Pareto lists the Pareto-optimal points (pareto.go); nil without any.
	Pareto      *hTable
	Scenarios   []hScenario
	Superseded  []string
	Confidence  string
	Fingerprint string
}

// hNoteCount is how many notes of one severity there are.
type hNoteCount struct {
	Severity, Text string
	N              int
}

type hNote struct {
	Severity, Mark, Check, Scenario, Text string
	Level                                 int
}

// hSection is a titled list of sentences.
type hSection struct {
	ID, Title string
	// Intro is a sentence before the list, when the list needs one.
	Intro string
	Lines []hLine
}

// hLine is one sentence of a section and, under it, its figures marked.
type hLine struct {
	Text    string
	Figures []hPart
}

// plainLines are sentences without marked figures.
func plainLines(ss []string) []hLine {
	out := make([]hLine, len(ss))
	for i, s := range ss {
		out[i] = hLine{Text: s}
	}
	return out
}

type hPlot struct {
	Name, Title string
	SVG         template.HTML
	// Caption is a line under the plot, its numbers marked; none for most.
	Caption []hPart
}

type hScenario struct {
	Name, ID, Status, Failed, From string
	Swatch                         template.HTML
	Detail                         hTable
	Categories                     hTable
	SLO                            hTable
	Turns                          hTable // per turn of the sessions
	Lengths                        string // where prompt lengths are estimated
	FailedLaunches                 []string
}

// hTable is a grid of cells; Head is its header row.
type hTable struct {
	ID, Caption string
	Head        []hCell
	Rows        []hRow
}

type hRow struct {
	Level int
	Cells []hCell
}

// hCell is one table cell: text and numbers (hPart), an optional class,
// hover title and outcome.
type hCell struct {
	Class, Title, Outcome, Scenario string
	Span                            int // columns it spans, when more than one
	// Swatch is the scenario's line as its plots draw it, beside its name.
	Swatch template.HTML
	// Label names the cell where the table is laid out as a card per row,
	// on a phone (its column's head is hidden there): the scenario, with
	// its swatch, or "winner".
	Label string
	Parts []hPart
	// Line is a second line under Parts, as large; Sub a smaller line
	// under both.
	Line []hPart
	Sub  []hPart
}

// hPart is a run of text or, when Field is set, one number with what it is.
type hPart struct {
	Text, Field, Scenario, Value string
	Level, Round                 int
	Class                        string
	// Break lets a line break after the text: a cell of many figures
	// ("0.12/0.15/0.19/0.25") is otherwise one word, wider than a printed
	// page once it has a figure per percentile.
	Break bool
}

func txt(s string) hPart { return hPart{Text: s} }

// breakable is s as text that may break after each "/": a head such as
// "TTFT p50/p90/p95/p99 s" is otherwise one word.
func breakable(s string) []hPart {
	var out []hPart
	for _, piece := range strings.SplitAfter(s, "/") {
		if piece != "" {
			out = append(out, hPart{Text: piece, Break: strings.HasSuffix(piece, "/")})
		}
	}
	return out
}

// num is a number part: shown as text, its exact value in data-value.
func num(field, scenario string, level measure.Level, round int, value float64, text string) hPart {
	return hPart{Text: text, Field: field, Scenario: scenario, Level: dataLevel(level), Round: round,
		Value: strconv.FormatFloat(value, 'g', -1, 64)}
}

// dataLevel is a level as the page's data-level attributes hold it: the
// number it is written as in JSON (measure.Level.Key), 0 for none.
func dataLevel(l measure.Level) int { return int(l.Key()) }

// signed is "+3.8" or "−3.8" (a real minus sign), one decimal; a bound
// of an interval that is not estimable (past a factor of ten) is "> +900".
func signed(x float64) string {
	if x >= maxSignedPct || math.IsNaN(x) {
		return fmt.Sprintf("> +%d", maxSignedPct)
	}
	return strings.Replace(fmt.Sprintf("%+.1f", x), "-", "−", 1)
}

// maxSignedPct is the largest difference, percent, signed writes as a
// figure: a factor of ten.
const maxSignedPct = 900

func htmlPage(v *verdict.Verdict) (*hPage, error) {
	p := &hPage{
		Title:      v.Campaign + ": verdict",
		V:          v,
		Confidence: fmt.Sprintf("%.0f%%", 100*v.Confidence),
		Intro: []string{
			fmt.Sprintf("Baseline: %s. Throughput is the geometric mean of the launches' steady-state output tokens per second, ± the half-width of its %.0f%% confidence interval.",
				v.Baseline, 100*v.Confidence),
			roundsLine(v) + ".",
		},
		Legend:   []string{legend(v) + "."},
		Verdict:  verdictTable(v),
		Energy:   energyHTML(v),
		Metrics:  append(metricsHTML(v), selectionHTML(v)...),
		Sections: sentenceSections(v),
	}
	if hasHopeless(v) {
		p.Legend = append(p.Legend, hopelessFootnote+".")
	}
	if line := v.PerGPULine(); line != "" {
		p.Intro = append(p.Intro, line+".")
	}
	p.Pareto = paretoHTML(v)
	for _, n := range v.Notes {
		mark := map[string]string{verdict.SeverityRed: "failed", verdict.SeverityWarn: "warning", verdict.SeverityInfo: "ok"}[n.Severity]
		hn := hNote{Severity: n.Severity, Mark: mark, Check: n.Check, Scenario: n.Scenario, Level: dataLevel(n.Level), Text: n.Text}
		p.Notes = append(p.Notes, hn)
		if n.Severity == verdict.SeverityRed {
			p.Red = append(p.Red, hn)
		}
	}
	for _, sev := range []struct{ s, one, many string }{
		{verdict.SeverityRed, "red note", "red notes"},
		{verdict.SeverityWarn, "warning", "warnings"},
		{verdict.SeverityInfo, "check passed", "checks passed"},
	} {
		n := 0
		for _, x := range v.Notes {
			if x.Severity == sev.s {
				n++
			}
		}
		if n > 0 {
			text := sev.many
			if n == 1 {
				text = sev.one
			}
			p.NoteCounts = append(p.NoteCounts, hNoteCount{Severity: sev.s, Text: text, N: n})
		}
	}
	plots, err := htmlPlots(v)
	if err != nil {
		return nil, err
	}
	p.Plots = plots
	if p.Levels, err = levelPlotsHTML(v); err != nil {
		return nil, err
	}
	for _, s := range v.Scenarios {
		hs := hScenario{Name: s.Name, ID: "detail-" + htmlID(s.Name), Status: s.Status, From: fromEarlier(s), Swatch: swatchHTML(styleOf(v, s.Name))}
		if s.Failed() {
			hs.Failed = fmt.Sprintf("failed in phase %s: %s", s.FailedPhase, verdict.FirstLine(s.Reason))
			if s.FailedPhase == "" {
				hs.Failed = "failed: " + verdict.FirstLine(s.Reason)
			}
		} else {
			hs.Detail = detailHTML(v.Percentiles, s)
			hs.Categories = plainTable(categoryTable(s))
			hs.SLO = plainTable(sloTable(s))
			hs.Turns, hs.Lengths = plainTable(turnTable(s)), lengthsLine(s)
			hs.Turns.Caption = sessionsCaption
		}
		for _, l := range s.FailedLaunches() {
			hs.FailedLaunches = append(hs.FailedLaunches, fmt.Sprintf("round %d failed in phase %s: %s", l.Round, l.FailedPhase, verdict.FirstLine(l.Reason)))
		}
		p.Superseded = append(p.Superseded, s.Superseded()...)
		p.Scenarios = append(p.Scenarios, hs)
	}
	return p, nil
}

// sentenceSections are the verdict's sentences under their headings: the
// crossovers and the speculative accept lengths.
func sentenceSections(v *verdict.Verdict) []hSection {
	var out []hSection
	if lines := sequentialLines(v); len(lines) > 0 {
		out = append(out, hSection{ID: "sequential", Title: "Sequential rounds", Intro: sequentialHeading(v) + ".", Lines: plainLines(lines)})
	}
	if len(v.Crossovers) > 0 {
		s := hSection{ID: "crossovers", Title: "Crossovers"}
		for _, x := range v.Crossovers {
			s.Lines = append(s.Lines, hLine{Text: x.Sentence})
			turns := plainLines(turnLines(x))
			if len(turns) > 0 {
				turns[len(turns)-1].Figures = breakEvenFigures(x)
			}
			s.Lines = append(s.Lines, turns...)
		}
		out = append(out, s)
	}
	if lines := capacityLines(v); len(lines) > 0 {
		out = append(out, hSection{ID: "capacity", Title: "Capacity under the SLO", Intro: capacityHeading(v) + ".", Lines: plainLines(lines)})
	}
	if al := acceptLengths(v); len(al) > 0 {
		out = append(out, hSection{ID: "accept-lengths", Title: "Speculative accept length", Lines: plainLines(al)})
	}
	return out
}

// verdictTable is the side-by-side table of Text, each number marked: per
// level, one column per scenario, a variant's change against the baseline
// under its throughput (as the terminal's stacked layout), then the winner.
// One column per scenario, not two, is what keeps the demo's four scenarios
// within a laptop's 1280 px without a scroll bar; on a phone each level is
// a card of its own, each cell labelled with its scenario (Label).
func verdictTable(v *verdict.Verdict) hTable {
	return verdictTableIn(v, tableUnit{id: "verdict-table", unit: "tok/s", field: "throughput",
		caption: "Output tokens per second at each level; under each variant, its change against " + v.Baseline})
}

// tableUnit is what a verdict-shaped table measures: throughput, or one of
// the verdict's metrics (metricVerdictOf) under a field of its own, so
// that the page's throughput figures are only throughput's.
type tableUnit struct{ id, unit, field, caption string }

// verdictTableIn is verdictTable for figures in u.
func verdictTableIn(v *verdict.Verdict, u tableUnit) hTable {
	t := hTable{ID: u.id, Caption: u.caption}
	t.Head = append(t.Head, hCell{Parts: []hPart{txt(levelHeader(v))}, Title: "the level: concurrent requests, or arrivals per second"})
	for _, i := range shown(v) {
		s := v.Scenarios[i]
		h := hCell{Scenario: s.Name, Swatch: swatchHTML(scenarioStyle(i)), Parts: []hPart{txt(s.Name)}, Sub: []hPart{txt(u.unit)}}
		if s.Name != v.Baseline {
			h.Sub = []hPart{txt(u.unit + ", vs " + v.Baseline)}
		}
		t.Head = append(t.Head, h)
	}
	t.Head = append(t.Head, hCell{Parts: []hPart{txt("winner")}})
	for _, row := range v.Rows {
		r := hRow{Level: dataLevel(row.Level), Cells: []hCell{{Class: "level", Label: measure.LevelName(row.Level),
			Parts: []hPart{{Text: measure.LevelLabel(row.Level), Class: "lv"}}}}}
		for _, i := range shown(v) {
			s, c := v.Scenarios[i], row.Cells[i]
			if c.Saturated {
				r.Cells = append(r.Cells, hCell{Class: "saturated", Scenario: s.Name, Parts: []hPart{txt("saturated")}})
			} else {
				cell := figureHTML(s.Name, row.Level, c.Present, c.Throughput, u)
				cell.Parts = append(cell.Parts, perGPUParts(s.Name, row.Level, c)...)
				if s.Name != v.Baseline {
					d := deltaHTML(s.Name, row.Level, c)
					cell.Class, cell.Outcome = d.Class, d.Outcome
					cell.Line, cell.Sub = d.Parts, d.Sub
					cell.Title = strings.TrimPrefix(cell.Title+"; "+d.Title, "; ")
				}
				r.Cells = append(r.Cells, cell)
			}
			last := &r.Cells[len(r.Cells)-1]
			last.Swatch, last.Label = swatchHTML(scenarioStyle(i)), s.Name
		}
		w := hCell{Class: "winner", Outcome: row.Outcome, Title: winnerTitle(row, v.Baseline), Label: "winner", Parts: []hPart{txt(winnerCell(row, v.Baseline))}}
		if row.Outcome == verdict.RowWinner {
			w.Class += " outcome-faster"
		}
		r.Cells = append(r.Cells, w)
		t.Rows = append(t.Rows, r)
	}
	return t
}

// figureHTML is "773.1 ±1.2%", the interval's bounds in the title, in u's
// unit and field.
func figureHTML(scenario string, level measure.Level, present bool, e verdict.Estimate, u tableUnit) hCell {
	c := hCell{Class: "num", Scenario: scenario}
	if !present {
		c.Parts = []hPart{txt("-")}
		return c
	}
	hw := e.HalfWidthPct()
	c.Title = fmt.Sprintf("%.0f%% interval %.1f to %.1f %s, %d launches", 100*e.Confidence, e.Lo, e.Hi, u.unit, e.N)
	c.Parts = []hPart{
		num(u.field, scenario, level, 0, e.Center, fmt.Sprintf("%.1f", e.Center)),
		txt(" ±"), num(u.field+"-hw", scenario, level, 0, hw, hwText(hw)), txt("%"),
	}
	return c
}

// hwText is an interval's half-width, percent, as every table writes it:
// one decimal under 10, none above, and past maxHalfWidthPct a bound. An
// interval wider than its center either way (one degree of freedom, whose t
// is 12.7) says only that the figure is unknown; printed in full it could
// run to dozens of digits.
func hwText(hw float64) string {
	switch {
	case hw >= maxHalfWidthPct || math.IsNaN(hw):
		return fmt.Sprintf(">%d", maxHalfWidthPct)
	case hw < 10:
		return fmt.Sprintf("%.1f", hw)
	}
	return fmt.Sprintf("%.0f", hw)
}

// maxHalfWidthPct is the widest half-width, percent, a table writes as a
// figure.
const maxHalfWidthPct = 100

// deltaHTML is the comparison: the delta with its interval, then the
// outcome, each of the four its own way, as in Text's deltaCell.
func deltaHTML(scenario string, level measure.Level, c verdict.Cell) hCell {
	h := hCell{Class: "delta", Scenario: scenario}
	if !c.Compared {
		h.Parts = []hPart{txt("-")}
		return h
	}
	if c.Outcome == verdict.OutcomeDoubted {
		// No change is shown: a number there would be read as a result.
		h.Outcome = c.Outcome
		h.Class += " outcome-" + c.Outcome
		h.Parts = []hPart{{Text: c.Outcome, Class: "badge"}}
		h.Sub = []hPart{txt(strings.TrimPrefix(doubtCell(c.Doubts), "doubted: "))}
		var why []string
		for _, d := range c.Doubts {
			why = append(why, d.Scenario+": "+d.Text)
		}
		h.Title = "not decided: " + strings.Join(why, "; ")
		return h
	}
	h.Outcome = c.Outcome
	h.Class += " outcome-" + c.Outcome
	h.Parts = []hPart{num("delta", scenario, level, 0, c.DeltaPct, signed(c.DeltaPct)), txt("%"),
		{Text: c.Outcome, Class: "badge"}}
	if c.Hopeless {
		h.Parts = append(h.Parts, txt(" ¹"))
	}
	if c.OutcomeLo > 0 && c.OutcomeConfidence > 0 {
		// The interval the outcome was decided on (bracketCell), labelled
		// with its confidence.
		lo, hi := 100*(c.OutcomeLo-1), 100*(c.OutcomeHi-1)
		h.Sub = append(h.Sub, txt("["),
			num("delta-lo", scenario, level, 0, lo, signed(lo)), txt(", "),
			num("delta-hi", scenario, level, 0, hi, signed(hi)), txt("] "+confText(c.OutcomeConfidence)))
		if c.PairedOnly {
			h.Sub = append(h.Sub, txt(fmt.Sprintf(", %d paired", c.Rounds)))
		}
	}
	switch c.Outcome {
	case verdict.OutcomeFaster, verdict.OutcomeSlower:
		h.Sub = append(h.Sub, txt(" "), num("p", scenario, level, 0, c.PAdjusted, verdict.PClause(c.PAdjusted)))
	case verdict.OutcomeTie:
	default:
		switch {
		case c.BelowMinEffect:
			h.Sub = append(h.Sub, txt(" under min_effect"))
		case c.MDEPct <= 0:
			h.Sub = append(h.Sub, txt(" no MDE"))
		case c.MDEPct >= verdict.MaxMDEPct:
			h.Sub = append(h.Sub, txt(" "+verdict.MDEShort(c.MDEPct)))
		default:
			h.Sub = append(h.Sub, txt(" MDE "), num("mde", scenario, level, 0, c.MDEPct, fmt.Sprintf("%.1f", c.MDEPct)), txt("%"))
		}
	}
	h.Title = fmt.Sprintf("%s, %d rounds, p=%s corrected (%s uncorrected); the bracket is the %s interval the outcome was decided on",
		c.Method, c.Rounds, verdict.FormatP(c.PAdjusted), verdict.FormatP(c.P), confText(c.OutcomeConfidence))
	if c.PairedOnly {
		h.Title += fmt.Sprintf("; the change is paired over these %d rounds, fewer than the throughputs average, so it need not be their ratio", c.Rounds)
	}
	return h
}

// detailHTML is a scenario's levels, its columns (levelColumnsAt) with each
// round's launch throughput beside the pooled figures.
func detailHTML(ps []float64, s verdict.Scenario) hTable {
	rounds := roundsOf(&s)
	cols := columnsOf(ps, &s, true)
	t := hTable{ID: "detail-table-" + htmlID(s.Name), Caption: s.Name + ": each level, each launch"}
	t.Head = append(t.Head, hCell{Parts: []hPart{txt(levelHeaderOf(s.Levels))}})
	width := 1
	for _, c := range cols {
		n := 1
		if c.PerRound {
			n = rounds
		}
		for k := 1; k <= n; k++ {
			t.Head = append(t.Head, hCell{Parts: breakable(c.head(k))})
		}
		width += n
	}
	for i := range s.Levels {
		l := &s.Levels[i]
		n := s.Name
		r := hRow{Level: dataLevel(l.Level), Cells: []hCell{{Class: "level", Scenario: n, Parts: []hPart{txt(measure.LevelLabel(l.Level))}}}}
		for _, c := range cols {
			if l.Saturated && !c.Saturated {
				// Its figures grow with the level's length: say what was
				// seen instead, after its launches and requests.
				r.Cells = append(r.Cells, hCell{Class: "saturated", Scenario: n, Span: width - len(r.Cells),
					Parts: []hPart{txt("saturated: " + l.Saturation)}})
				break
			}
			if c.PerRound {
				for k := 1; k <= rounds; k++ {
					p, ok := launchThroughput(n, l, k)
					class := "num"
					if !ok {
						class = "num missing"
					}
					r.Cells = append(r.Cells, hCell{Class: class, Scenario: n, Parts: []hPart{p}})
				}
				continue
			}
			cell := hCell{Class: "num", Scenario: n, Parts: c.parts(n, l)}
			if len(cell.Parts) == 1 && cell.Parts[0].Field == "" {
				cell.Class = "num missing"
			}
			r.Cells = append(r.Cells, cell)
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// plainTable is a table of strings as an HTML table, no number marked.
func plainTable(t table) hTable {
	var h hTable
	if len(t.Rows) == 0 {
		return h
	}
	for _, s := range t.Header {
		h.Head = append(h.Head, hCell{Parts: []hPart{txt(s)}})
	}
	for _, row := range t.Rows {
		var r hRow
		for _, s := range row {
			r.Cells = append(r.Cells, hCell{Class: "num", Parts: []hPart{txt(s)}})
		}
		h.Rows = append(h.Rows, r)
	}
	return h
}

// svgSize is the fixed size gonum writes on its <svg> element: the page
// sizes the plots itself, from the viewBox.
var svgSize = regexp.MustCompile(`^<svg width="[^"]*" height="[^"]*"`)

// htmlPlots draws every plot as SVG, ready to inline: no XML prolog, no
// fixed size, so it scales to the page's width.
func htmlPlots(v *verdict.Verdict) ([]hPlot, error) {
	var out []hPlot
	for _, b := range plotBuilders(v) {
		p, err := b.build(v)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", b.name, err)
		}
		h, err := inlinePlot(b.name, p)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// htmlID makes a scenario name safe in an id: letters, digits, '-', '_'.
func htmlID(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
