package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// DefaultWidth is the widest line, in columns, the text verdict table draws
// when the terminal's width is unknown (a file, a pipe, `nohup`): a common
// terminal's width, and room for four scenarios side by side.
const DefaultWidth = 120

// verdictTableText draws the verdict table to fit width columns (0:
// DefaultWidth), in the first of three layouts that fits. Side by side, each
// level is one row and each scenario has its columns: on one line per level
// when that fits (a baseline and a variant or two), else with each variant's
// change against the baseline under its throughput, two lines per level (the
// demo's four scenarios). When neither fits (more variants, long names, a
// narrow terminal) each variant gets a block of its own under a block of the
// baseline and the winners, a layout whose width does not grow with the
// number of variants. A line wider than the terminal wraps and turns a table
// into noise; that is what the choice avoids. Each of the first two layouts
// is tried with an undecided level's winner cell naming who else can be the
// best, then counting them, before the next layout.
func verdictTableText(v *verdict.Verdict, width int) (string, error) {
	return tableTextIn(v, "tok/s", width)
}

// tableTextIn is verdictTableText for figures in unit: throughput's tok/s,
// or one of the verdict's metrics (metricVerdictOf).
func tableTextIn(v *verdict.Verdict, unit string, width int) (string, error) {
	if width <= 0 {
		width = DefaultWidth
	}
	for _, layout := range []struct {
		t func(named bool) table
		r tw.Renderer
	}{
		{func(named bool) table { return sideBySideIn(v, unit, named) }, nil},
		{func(named bool) table { return stackedTable(v, unit, named) }, rowLines()},
	} {
		for _, named := range []bool{true, false} {
			var b bytes.Buffer
			if err := renderTable(&b, layout.t(named), layout.r); err != nil {
				return "", err
			}
			if widest(b.String()) <= width {
				return b.String(), nil
			}
		}
	}
	var b bytes.Buffer
	for i, blk := range variantBlocks(v, unit) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s:\n", blk.title)
		if err := renderTable(&b, blk.table, nil); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// rowLines is the box drawing with a line between rows, which keeps each
// level's two lines together.
func rowLines() tw.Renderer {
	return renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight),
		Settings: tw.Settings{Separators: tw.Separators{BetweenRows: tw.On}}})
}

// widest is the width of s's widest line, in runes: every character the
// tables draw (box drawing, ±, −, ¹) takes one column.
func widest(s string) int {
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		n = max(n, utf8.RuneCountInString(line))
	}
	return n
}

// shown are the scenarios the verdict table has a column or block for: the
// failed ones have no figures (the notes and the detail say why).
func shown(v *verdict.Verdict) []int {
	var out []int
	for i, s := range v.Scenarios {
		if !s.Failed() {
			out = append(out, i)
		}
	}
	return out
}

// stackedTable is the side-by-side table for a terminal: per level, each
// scenario's throughput and, under a variant's, its change against the
// baseline; then the winner, a phrase a line (winnerLines).
func stackedTable(v *verdict.Verdict, unit string, named bool) table {
	t := table{Header: []string{levelHeader(v)}}
	for _, i := range shown(v) {
		s := v.Scenarios[i]
		if s.Name == v.Baseline {
			t.Header = append(t.Header, s.Name+"\n"+unit)
		} else {
			t.Header = append(t.Header, s.Name+"\n"+unit+", vs "+v.Baseline)
		}
	}
	t.Header = append(t.Header, "winner")
	for _, row := range v.Rows {
		r := []string{measure.LevelLabel(row.Level)}
		for _, i := range shown(v) {
			c := row.Cells[i]
			cell := throughputCell(c)
			if v.Scenarios[i].Name != v.Baseline {
				cell += "\n" + deltaCell(c)
				if b := bracketCell(c); b != "" {
					cell += "\n" + b
				}
			}
			r = append(r, cell)
		}
		t.Rows = append(t.Rows, append(r, winnerLines(row, v.Baseline, named)))
	}
	return t
}

// block is one titled table of the narrow layout.
type block struct {
	title string
	table table
}

// variantBlocks is the verdict table for a terminal too narrow for every
// scenario side by side: the baseline's throughput with the winner at each
// level, then one block per variant with its throughput and its change
// against the baseline.
func variantBlocks(v *verdict.Verdict, unit string) []block {
	b := -1
	for i, s := range v.Scenarios {
		if s.Name == v.Baseline {
			b = i
		}
	}
	first := block{title: fmt.Sprintf("%s (the baseline) and the winner at each level", v.Baseline),
		table: table{Header: []string{levelHeader(v), unit, "winner"}}}
	for _, row := range v.Rows {
		tp := "-"
		if b >= 0 {
			tp = throughputCell(row.Cells[b])
		}
		first.table.Rows = append(first.table.Rows, []string{measure.LevelLabel(row.Level), tp, winnerCell(row, v.Baseline)})
	}
	out := []block{first}
	for _, i := range shown(v) {
		if i == b {
			continue
		}
		blk := block{title: fmt.Sprintf("%s against %s", v.Scenarios[i].Name, v.Baseline),
			table: table{Header: []string{levelHeader(v), unit, "vs " + v.Baseline}}}
		for _, row := range v.Rows {
			delta := deltaCell(row.Cells[i])
			if b := bracketCell(row.Cells[i]); b != "" {
				delta += "\n" + b
			}
			blk.table.Rows = append(blk.table.Rows, []string{measure.LevelLabel(row.Level), throughputCell(row.Cells[i]), delta})
		}
		out = append(out, blk)
	}
	alignBlocks(out)
	return out
}

// alignBlocks pads the cells of every block's columns to one width, so that
// the blocks stack as one long table would: figures under figures.
func alignBlocks(blocks []block) {
	widths := map[int]int{}
	for _, b := range blocks {
		for _, r := range b.table.Rows {
			for j, c := range r {
				widths[j] = max(widths[j], utf8.RuneCountInString(c))
			}
		}
	}
	for _, b := range blocks {
		for _, r := range b.table.Rows {
			for j, c := range r {
				r[j] = strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)) + c
			}
		}
	}
}

// writeVerdictTable writes the verdict table fitted to width.
func writeVerdictTable(w io.Writer, v *verdict.Verdict, width int) error {
	s, err := verdictTableText(v, width)
	if err != nil {
		return err
	}
	if line := v.PerGPULine(); line != "" {
		// Above the table, folded to the table's width.
		s = strings.Join(fold(line, foldWidth(width), "", "  "), "\n") + "\n" + s
	}
	_, err = io.WriteString(w, s)
	return err
}
