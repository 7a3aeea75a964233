package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Plot sizes.
const (
	PlotWidth  = 8 * vg.Inch
	PlotHeight = 5 * vg.Inch
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
	build func(*verdict.Verdict) (*plot.Plot, error)
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
			data, err := encodePlot(p, ext)
			if err != nil {
				return nil, fmt.Errorf("plot %s.%s: %w", b.name, ext, err)
			}
			out[b.name+"."+ext] = data
		}
	}
	return out, nil
}

// encodePlot draws p at the plot size in the format ext ("png", "svg").
func encodePlot(p *plot.Plot, ext string) ([]byte, error) {
	wt, err := p.WriterTo(PlotWidth, PlotHeight, ext)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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

// newLevelPlot is a plot with concurrency on a log axis, ticked at the levels.
func newLevelPlot(v *verdict.Verdict, title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "concurrency"
	if len(v.Levels) > 0 && measure.IsSpeed(v.Levels[0]) {
		p.X.Label.Text = "trace speed (× its recorded pace)"
	} else if len(v.Levels) > 0 && measure.IsRate(v.Levels[0]) {
		p.X.Label.Text = "requests per second"
	}
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	levels := plotLevels(v)
	if len(levels) == 0 {
		return p // nothing measured: an empty, linear frame
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
	p.Add(plotter.NewGrid())
	return p
}

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
func leftOut(p *plot.Plot, s verdict.Scenario, why string) {
	switch {
	case s.Failed() && s.FailedPhase != "":
		why = "failed at " + s.FailedPhase
	case s.Failed():
		why = "failed"
	case s.Status == results.StatusPending:
		why = "not finished"
	}
	p.Legend.Add(fmt.Sprintf("%s: not plotted (%s)", s.Name, why))
}

func addLines(p *plot.Plot, v *verdict.Verdict, f func(verdict.Level) (float64, bool)) error {
	var args []any
	var missing []verdict.Scenario
	for _, s := range v.Scenarios {
		if xy := series(s, f); len(xy) > 0 {
			args = append(args, s.Name, xy)
		} else {
			missing = append(missing, s)
		}
	}
	if len(args) > 0 {
		if err := plotutil.AddLinePoints(p, args...); err != nil {
			return err
		}
	}
	for _, s := range missing {
		leftOut(p, s, "no positive value")
	}
	return nil
}

func throughputPlot(v *verdict.Verdict) (*plot.Plot, error) {
	p := newLevelPlot(v, v.Campaign+": throughput", "output tok/s")
	return p, addLines(p, v, func(l verdict.Level) (float64, bool) {
		return l.Throughput.Center, l.Throughput.N > 0
	})
}

func latencyPlot(v *verdict.Verdict) (*plot.Plot, error) {
	p := newLevelPlot(v, v.Campaign+": p99 latency", "p99 latency (s)")
	return p, addLines(p, v, func(l verdict.Level) (float64, bool) { return l.Latency.P99, l.Latency.N > 0 })
}

// speedupPlot draws each variant's throughput over the baseline's with its
// confidence band, and the 1.0 line: above it the variant is faster.
func speedupPlot(v *verdict.Verdict) (*plot.Plot, error) {
	p := newLevelPlot(v, v.Campaign+": speedup against "+v.Baseline, "throughput / "+v.Baseline)
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Color = color.Gray{Y: 80}
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	i := 0
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline {
			continue
		}
		var mid, lo, hi plotter.XYs
		for _, c := range v.Levels {
			cell := v.Cell(c, s.Name)
			if measure.LevelValue(c) <= 0 || cell == nil || !cell.Compared || !plottable(cell.Speedup) ||
				math.IsNaN(cell.SpeedupLo) || math.IsNaN(cell.SpeedupHi) {
				continue
			}
			x := measure.LevelValue(c)
			mid = append(mid, plotter.XY{X: x, Y: cell.Speedup})
			lo = append(lo, plotter.XY{X: x, Y: cell.SpeedupLo})
			hi = append(hi, plotter.XY{X: x, Y: cell.SpeedupHi})
		}
		if len(mid) == 0 {
			leftOut(p, s, "no level compared with "+v.Baseline)
			continue
		}
		col := plotutil.Color(i)
		i++
		if len(mid) > 1 {
			ring := append(plotter.XYs{}, lo...)
			for j := len(hi) - 1; j >= 0; j-- {
				ring = append(ring, hi[j])
			}
			band, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, err
			}
			r, g, b, _ := col.RGBA()
			band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
			band.LineStyle.Width = 0
			p.Add(band)
		}
		line, points, err := plotter.NewLinePoints(mid)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = col, col
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
		if x := crossoverOf(v, s.Name); x != nil {
			ylo, yhi := minY(lo), maxY(hi)
			if err := markBreakEven(p, x.BreakEven, col, min(ylo, 1-speedupMargin), max(yhi, 1+speedupMargin)); err != nil {
				return nil, err
			}
		}
	}
	// The 1.0 line has no data range of its own: keep it in view.
	p.Y.Min = min(p.Y.Min, 1-speedupMargin)
	p.Y.Max = max(p.Y.Max, 1+speedupMargin)
	return p, nil
}
