package report

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// markBreakEven draws a variant's break-even on the speedup plot, in the
// variant's colour: its interval as a band across [ylo, yhi] and the
// estimate as a dashed vertical line. Only a crossing is drawn: a bound has
// no place on the axis beyond the level the table already shows.
func markBreakEven(p *plot.Plot, be *verdict.BreakEven, col color.Color, ylo, yhi float64) error {
	if be == nil || be.Kind != verdict.BreakEvenCrosses || be.Lo <= 0 || be.Load <= 0 {
		return nil
	}
	band, err := plotter.NewPolygon(plotter.XYs{{X: be.Lo, Y: ylo}, {X: be.Hi, Y: ylo}, {X: be.Hi, Y: yhi}, {X: be.Lo, Y: yhi}})
	if err != nil {
		return err
	}
	r, g, b, _ := col.RGBA()
	band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 30}
	band.LineStyle.Width = 0
	line, err := plotter.NewLine(plotter.XYs{{X: be.Load, Y: ylo}, {X: be.Load, Y: yhi}})
	if err != nil {
		return err
	}
	line.Color = col
	line.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(band, line)
	return nil
}

// crossoverOf is the named variant's crossover, or nil.
func crossoverOf(v *verdict.Verdict, name string) *verdict.Crossover {
	for i := range v.Crossovers {
		if v.Crossovers[i].Scenario == name {
			return &v.Crossovers[i]
		}
	}
	return nil
}

func minY(xy plotter.XYs) float64 {
	m := xy[0].Y
	for _, p := range xy {
		m = min(m, p.Y)
	}
	return m
}

func maxY(xy plotter.XYs) float64 {
	m := xy[0].Y
	for _, p := range xy {
		m = max(m, p.Y)
	}
	return m
}
