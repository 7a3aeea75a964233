package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// The Pareto frontier as the reports show it: the plot (plot_pareto.go),
// the list of the Pareto-optimal points on the page, and four columns of
// summary.csv. verdict/pareto.go computes it.

// Digits the Pareto coordinates are shown with: a throughput per GPU as a
// throughput is; tokens per second per user, tens to hundreds, to one
// decimal.
const (
	paretoTokDigits  = 1
	paretoUserDigits = 1
)

// Fields of the Pareto coordinates on the page.
const (
	fieldParetoTokS    = "pareto-tok-s"
	fieldParetoPerUser = "pareto-per-user"
)

// paretoYLabel names the Pareto plot's y axis and the list's throughput
// column: per GPU, or per server when the run does not know every
// scenario's GPUs.
func paretoYLabel(p *verdict.Pareto) string {
	if p.PerGPU {
		return "output tok/s per GPU"
	}
	return "output tok/s per server (GPUs unknown)"
}

// paretoXLabel names the x axis: the per-user figure and how it is made.
const paretoXLabel = "output tok/s per user (1 / median TPOT)"

// paretoHTML is the table of the Pareto-optimal points, the most tokens
// per second per user first, each coordinate marked with its exact value;
// nil when the run has no Pareto.
func paretoHTML(v *verdict.Verdict) *hTable {
	if v.Pareto == nil {
		return nil
	}
	p := v.Pareto
	t := &hTable{ID: "pareto-table", Caption: paretoCaption(p)}
	for _, h := range paretoHeader(v) {
		t.Head = append(t.Head, hCell{Parts: []hPart{txt(h)}})
	}
	for _, pt := range paretoListed(p) {
		t.Rows = append(t.Rows, hRow{Level: dataLevel(pt.Level), Cells: []hCell{
			{Scenario: pt.Scenario, Swatch: swatchHTML(styleOf(v, pt.Scenario)), Parts: []hPart{txt(pt.Scenario)}},
			{Class: "level", Scenario: pt.Scenario, Parts: []hPart{txt(measure.LevelLabel(pt.Level))}},
			{Class: "num", Scenario: pt.Scenario, Parts: []hPart{num(fieldParetoTokS, pt.Scenario, pt.Level, 0, pt.TokS,
				strconv.FormatFloat(pt.TokS, 'f', paretoTokDigits, 64))}},
			{Class: "num", Scenario: pt.Scenario, Parts: []hPart{num(fieldParetoPerUser, pt.Scenario, pt.Level, 0, pt.PerUser,
				strconv.FormatFloat(pt.PerUser, 'f', paretoUserDigits, 64))}},
		}})
	}
	return t
}

// paretoHeader are the list's column heads, on the page and in the text
// and Markdown reports alike: short, so that the list fits an 80-column
// terminal; the caption above it says how each figure is made.
func paretoHeader(v *verdict.Verdict) []string {
	y := "tok/s per GPU"
	if !v.Pareto.PerGPU {
		y = "tok/s per server"
	}
	return []string{"scenario", levelHeader(v), y, "tok/s per user"}
}

// paretoListed are the Pareto-optimal points in the order every list shows
// them: the most tokens per second per user first, the order a reader
// trades interactivity away for throughput.
func paretoListed(p *verdict.Pareto) []verdict.ParetoPoint {
	opt := p.Optimal()
	slices.Reverse(opt)
	return opt
}

// paretoHeading introduces the list in the text report and verdict.md:
// the page's caption, which names what the list holds.
func paretoHeading(p *verdict.Pareto) string { return paretoCaption(p) }

// paretoTable is the page's list of the Pareto-optimal points for the text
// report's detail and verdict.md, each coordinate with the page's digits;
// nil when the run has no Pareto.
func paretoTable(v *verdict.Verdict) *table {
	if v.Pareto == nil {
		return nil
	}
	t := &table{Header: paretoHeader(v)}
	for _, pt := range paretoListed(v.Pareto) {
		t.Rows = append(t.Rows, []string{pt.Scenario, measure.LevelLabel(pt.Level),
			strconv.FormatFloat(pt.TokS, 'f', paretoTokDigits, 64), strconv.FormatFloat(pt.PerUser, 'f', paretoUserDigits, 64)})
	}
	return t
}

// paretoCaption says what the list holds and how each figure is made.
func paretoCaption(p *verdict.Pareto) string {
	per := "throughput per GPU is a level's throughput over its scenario's GPUs"
	if !p.PerGPU {
		per = "throughput is each server's whole (the run does not record every scenario's GPUs)"
	}
	return fmt.Sprintf("The Pareto-optimal levels of every scenario: no other level is at least as fast on both axes and faster on one. The %s; per user is 1 / the level's median TPOT. Read from the point estimates, not a test.",
		per)
}

// paretoCSV are a level's Pareto columns of summary.csv: the scenario's
// GPUs and the level's throughput per GPU (empty when the GPUs are not
// known), its tokens per second per user (empty without a TPOT), and
// whether it is on the overall frontier.
func paretoCSV(v *verdict.Verdict, s *verdict.Scenario, l *verdict.Level) []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	out := make([]string, len(csvPareto))
	if s.GPUs > 0 {
		out[0] = strconv.Itoa(s.GPUs)
	}
	if x, ok := perGPUFigure(l); ok {
		out[1] = f(x)
	}
	if x, ok := l.PerUser(); ok {
		out[2] = f(x)
	}
	pt := v.Pareto.Point(s.Name, l.Level)
	out[3] = strconv.FormatBool(pt != nil && pt.Optimal)
	return out
}
