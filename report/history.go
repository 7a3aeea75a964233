package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/bakeoff-dev/bakeoff/history"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// HistoryText writes a scenario's history: a table of its throughput per
// run and level, oldest first, then the change points found in it and the
// runs left out.
func HistoryText(w io.Writer, s *history.Series) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s of campaign %s on %s: %s, oldest first\n", s.Scenario, s.Campaign, history.HostWords(s.Host), plural(len(s.Points), "run", "runs"))
	t := table{Header: []string{"#", "run", "started"}}
	for _, c := range s.Levels {
		t.Header = append(t.Header, measure.LevelName(c)+" tok/s")
	}
	changeAt := map[int]bool{}
	for _, ch := range s.Changes {
		changeAt[ch.Index] = true
	}
	for i, p := range s.Points {
		mark := strconv.Itoa(i + 1)
		if changeAt[i] {
			mark += " ▶"
		}
		row := []string{mark, filepath.Base(p.Run), p.Started.UTC().Format("2006-01-02 15:04")}
		for _, c := range s.Levels {
			cell := "—"
			if e, ok := p.Throughput[c]; ok {
				cell = estimate(e)
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	if err := renderTable(ew, t, nil); err != nil {
		return err
	}
	fmt.Fprintln(ew)
	if len(s.Changes) == 0 {
		fmt.Fprintf(ew, "no change point (E-divisive means on the runs' log throughput at every level, p < %v)\n", s.Alpha)
	}
	for _, ch := range s.Changes {
		fmt.Fprintf(ew, "▶ change at run %d (%s): %s over the levels (%s), p=%.3f\n", ch.Index+1, filepath.Base(ch.Run),
			verdict.Pct(ch.DeltaPct), changeLevels(s, ch), ch.P)
	}
	for _, sk := range s.Skipped {
		fmt.Fprintf(ew, "! not in the history: %s\n", sk)
	}
	return ew.err
}

// changeLevels is "C=1 −6.1%, C=10 −5.8%".
func changeLevels(s *history.Series, ch history.Change) string {
	var b bytes.Buffer
	for _, c := range s.Levels {
		d, ok := ch.Levels[c]
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", measure.LevelName(c), verdict.Pct(d))
	}
	return b.String()
}

// historyChart draws each level's throughput relative to its first run,
// percent, run by run with its interval, and a dashed line at each change.
func historyChart(s *history.Series) (*chart, error) {
	c := newChart(fmt.Sprintf("%s: %s on %s, run by run", s.Campaign, s.Scenario, history.HostWords(s.Host)), "run (oldest first)", "throughput against the first run (%)")
	c.p.Add(newGrid())
	lo, hi := 0.0, 0.0
	for i, lv := range s.Levels {
		st := scenarioStyle(i)
		var first float64
		var xy plotter.XYs
		var errs plotter.YErrors
		for k, p := range s.Points {
			e, ok := p.Throughput[lv]
			if !ok {
				continue
			}
			if first == 0 {
				first = e.Center
			}
			y := 100 * (e.Center/first - 1)
			xy = append(xy, plotter.XY{X: float64(k + 1), Y: y})
			errs = append(errs, struct{ Low, High float64 }{y - 100*(e.Lo/first-1), 100*(e.Hi/first-1) - y})
			lo, hi = math.Min(lo, 100*(e.Lo/first-1)), math.Max(hi, 100*(e.Hi/first-1))
		}
		line, points, err := st.linePoints(xy)
		if err != nil {
			return nil, err
		}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{xy, errs})
		if err != nil {
			return nil, err
		}
		bars.LineStyle.Color = st.Color
		c.add(measure.LevelName(lv), "", "level", line, points, bars)
	}
	for _, ch := range s.Changes {
		x := float64(ch.Index) + 0.5
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo - 1}, {X: x, Y: hi + 1}})
		if err != nil {
			return nil, err
		}
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		c.add("", "", "change", l)
	}
	var ticks []plot.Tick
	for k := range s.Points {
		ticks = append(ticks, plot.Tick{Value: float64(k + 1), Label: strconv.Itoa(k + 1)})
	}
	c.p.X.Tick.Marker = plot.ConstantTicks(ticks)
	c.p.X.Min, c.p.X.Max = 0.5, float64(len(s.Points))+0.5
	fitAxis(&c.p.Y, lo, hi, false, false)
	return c, nil
}

// HistoryHTML writes a page with the history's trend (an inline SVG) above
// its table and change points.
func HistoryHTML(w io.Writer, s *history.Series) error {
	c, err := historyChart(s)
	if err != nil {
		return err
	}
	svg, err := c.encode("svg")
	if err != nil {
		return err
	}
	var text bytes.Buffer
	if err := HistoryText(&text, s); err != nil {
		return err
	}
	title := html.EscapeString(fmt.Sprintf("%s: %s history on %s", s.Campaign, s.Scenario, history.HostWords(s.Host)))
	_, err = fmt.Fprintf(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>body{font-family:sans-serif;margin:1rem;max-width:60rem}svg{max-width:100%%;height:auto}pre{overflow-x:auto;font-size:.8rem}</style>
</head><body>
<h1>%s</h1>
<figure>%s</figure>
<pre>%s</pre>
</body></html>
`, title, title, svg, html.EscapeString(text.String()))
	return err
}
