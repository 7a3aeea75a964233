package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// levelMargin widens the concurrency axis on both sides, as a factor.
const levelMargin = 1.25

// speedupMargin keeps the speedup axis at least this far on both sides of 1.
const speedupMargin = 0.05

// Plot names, without extension; each is written as .png and .svg.
const (
	PlotThroughput = "throughput"
	PlotSpeedup    = "speedup"
	PlotLatencyP99 = "latency-p99"
)

// plotBuilder is one plot: its file name without extension and how it is
// drawn.
type plotBuilder struct {
	name  string
	build func(*verdict.Verdict) (*chart, error)
}

// plotBuilders are the plots v has, in the order the HTML report shows
// them: a plot that only some runs have is added here under its condition.
func plotBuilders(v *verdict.Verdict) []plotBuilder {
	out := []plotBuilder{
		{PlotThroughput, throughputPlot},
		{PlotSpeedup, speedupPlot},
		{PlotLatencyP99, latencyPlot},
	}
	if v.HasEnergy() {
		out = append(out, plotBuilder{PlotEnergy, energyPlot})
	}
	if hasAccept(v) {
		out = append(out, plotBuilder{PlotAccept, acceptPlot})
		out = append(out, acceptPositionBuilders(v)...)
	}
	if v.Pareto != nil {
		out = append(out, plotBuilder{PlotPareto, paretoPlot})
	}
	return out
}

// Plots returns every plot, encoded, by file name (e.g. "speedup.svg").
func Plots(v *verdict.Verdict) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, b := range plotBuilders(v) {
		p, err := b.build(v)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", b.name, err)
		}
		for _, ext := range []string{"png", "svg"} {
			data, err := p.encode(ext)
			if err != nil {
				return nil, fmt.Errorf("plot %s.%s: %w", b.name, ext, err)
			}
			out[b.name+"."+ext] = data
		}
	}
	return out, nil
}

// plotLevels are the levels a log concurrency axis can show: positive ones.
// gonum's log scale panics on any value at or below 0, so nothing that is not
// positive may reach the axis, as a range or as a point.
func plotLevels(v *verdict.Verdict) []measure.Level {
	var out []measure.Level
	for _, c := range v.Levels {
		if measure.LevelValue(c) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// newLevelChart is a chart with the levels on a log axis, ticked at the
// levels.
func newLevelChart(v *verdict.Verdict, title, ylabel string) *chart {
	xlabel := "concurrency"
	if len(v.Levels) > 0 && measure.IsSpeed(v.Levels[0]) {
		xlabel = "trace speed (× its recorded pace)"
	} else if len(v.Levels) > 0 && measure.IsRate(v.Levels[0]) {
		xlabel = "requests per second"
	}
	c := newChart(title, xlabel, ylabel)
	p := c.p
	levels := plotLevels(v)
	if len(levels) == 0 {
		return c // nothing measured: an empty, linear frame
	}
	// The range is fixed rather than left to the data: an axis with no data
	// of its own (only the 1.0 line) would otherwise start at 0.
	p.X.Scale = plot.LogScale{}
	p.X.Min = measure.LevelValue(levels[0]) / levelMargin
	p.X.Max = measure.LevelValue(levels[len(levels)-1]) * levelMargin
	var ticks []plot.Tick
	for _, c := range levels {
		ticks = append(ticks, plot.Tick{Value: measure.LevelValue(c), Label: measure.LevelLabel(c)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(newGrid())
	return c
}

// newGrid is the grid behind the data: light, so that it guides the eye
// without competing with the lines.
func newGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridColor, gridColor
	return g
}

// gridColor is the grid's grey.
var gridColor = color.Gray{Y: 0xdd}

// series returns one point per level where f gives a positive, finite value.
// A level with no throughput or no latency (every request failed) is not a
// measurement of speed, and a zero would pull the axis down to where the
// measured points cannot be read.
func series(s verdict.Scenario, f func(verdict.Level) (float64, bool)) plotter.XYs {
	var xy plotter.XYs
	for _, l := range s.Levels {
		if y, ok := f(l); ok && measure.LevelValue(l.Level) > 0 && plottable(y) {
			xy = append(xy, plotter.XY{X: measure.LevelValue(l.Level), Y: y})
		}
	}
	return xy
}

func plottable(y float64) bool { return y > 0 && !math.IsInf(y, 0) }

// leftOut says, in the legend, why a scenario has no line: a reader must not
// take a missing line for a scenario that was never part of the run.
func leftOut(c *chart, s verdict.Scenario, why string) {
	switch {
	case s.Failed() && s.FailedPhase != "":
		why = "failed at " + s.FailedPhase
	case s.Failed():
		why = "failed"
	case s.Status == results.StatusPending:
		why = "not finished"
	}
	c.note(fmt.Sprintf("%s: not plotted (%s)", s.Name, why), s.Name)
}

// addLines draws a line per scenario of f at each level, in the
// scenario's style, and fits the value axis to them from 0.
func addLines(c *chart, v *verdict.Verdict, f func(verdict.Level) (float64, bool)) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range v.Scenarios {
		xy := series(s, f)
		if len(xy) == 0 {
			leftOut(c, s, "no positive value")
			continue
		}
		line, points, err := styleOf(v, s.Name).linePoints(xy)
		if err != nil {
			return err
		}
		c.add(s.Name, s.Name, "line", line, points)
		lo, hi = min(lo, minY(xy)), max(hi, maxY(xy))
	}
	fitAxis(&c.p.Y, lo, hi, true, false)
	return nil
}

func throughputPlot(v *verdict.Verdict) (*chart, error) {
	c := newLevelChart(v, v.Campaign+": throughput", "output tok/s")
	return c, addLines(c, v, func(l verdict.Level) (float64, bool) {
		return l.Throughput.Center, l.Throughput.N > 0
	})
}

func latencyPlot(v *verdict.Verdict) (*chart, error) {
	c := newLevelChart(v, v.Campaign+": p99 latency", "p99 latency (s)")
	return c, addLines(c, v, func(l verdict.Level) (float64, bool) { return l.Latency.P99, l.Latency.N > 0 })
}

// speedupPlot draws each variant's throughput over the baseline's with its
// confidence band, and the 1.0 line, labelled: above it the variant is
// faster. A crossing break-even is a shaded interval with its estimate as
// a dashed line, labelled at the top, and a legend entry.
func speedupPlot(v *verdict.Verdict) (*chart, error) {
	c := newLevelChart(v, v.Campaign+": speedup"+perGPUWords(v)+" against "+v.Baseline, "throughput"+perGPUWords(v)+" / "+v.Baseline)
	p := c.p
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Color = color.Gray{Y: 80}
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	c.add("1 = as fast as "+v.Baseline, "", "reference", one)
	lo, hi := 1-speedupMargin, 1+speedupMargin
	var labels []plotLabel
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline {
			continue
		}
		var mid, bl, bh plotter.XYs
		for _, lv := range v.Levels {
			cell := v.Cell(lv, s.Name)
			if measure.LevelValue(lv) <= 0 || cell == nil || !cell.Compared || !plottable(cell.Speedup) ||
				math.IsNaN(cell.SpeedupLo) || math.IsNaN(cell.SpeedupHi) {
				continue
			}
			x := measure.LevelValue(lv)
			mid = append(mid, plotter.XY{X: x, Y: cell.Speedup})
			bl = append(bl, plotter.XY{X: x, Y: cell.SpeedupLo})
			bh = append(bh, plotter.XY{X: x, Y: cell.SpeedupHi})
		}
		if len(mid) == 0 {
			leftOut(c, s, "no level compared with "+v.Baseline)
			continue
		}
		st := styleOf(v, s.Name)
		var ps []plot.Plotter
		if len(mid) > 1 {
			ring := append(plotter.XYs{}, bl...)
			for j := len(bh) - 1; j >= 0; j-- {
				ring = append(ring, bh[j])
			}
			band, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, err
			}
			band.Color = st.fill(plotBandAlpha)
			band.LineStyle.Width = 0
			c.add("", s.Name, "band", band)
		}
		line, points, err := st.linePoints(mid)
		if err != nil {
			return nil, err
		}
		ps = append(ps, line, points)
		c.add(s.Name, s.Name, "line", ps...)
		lo, hi = min(lo, minY(bl)), max(hi, maxY(bh))
		if x := crossoverOf(v, s.Name); x != nil {
			if l, ok := breakEvenMark(c, s.Name, x.BreakEven, st); ok {
				l.row = len(labels)
				labels = append(labels, l)
			}
		}
	}
	// The 1.0 line has no data range of its own: keep it in view. Above
	// the data, room for the break-even labels, a row each.
	fitAxis(&p.Y, lo, hi+float64(len(labels))*labelRoom*(hi-lo), false, false)
	for _, l := range labels {
		p.Add(l)
	}
	return c, nil
}
