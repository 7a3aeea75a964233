package report

import (
	"fmt"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// breakEvenMark draws a variant's break-even on the speedup chart, in the
// variant's colour: its interval as a shaded band from the bottom of the
// axis to the top and the estimate as a dashed vertical line, with a
// legend entry ("eagle3: break-even 23 [17, 31]"); ok is false, nothing
// drawn, unless it crosses. The label it returns, the load alone, goes at
// the top of the line, above the data. A bound has no place on the axis
// beyond the level the table already shows.
func breakEvenMark(c *chart, scenario string, be *verdict.BreakEven, st seriesStyle) (plotLabel, bool) {
	if be == nil || be.Kind != verdict.BreakEvenCrosses || be.Lo <= 0 || be.Load <= 0 {
		return plotLabel{}, false
	}
	band := &vBand{lo: be.Lo, hi: be.Hi}
	band.Color = st.fill(plotShadeAlpha)
	line := &vBand{lo: be.Load, hi: be.Load}
	line.LineStyle = st.line()
	line.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	load, lo, hi := breakEvenText(be.Load), breakEvenText(be.Lo), breakEvenText(be.Hi)
	c.add(fmt.Sprintf("%s: break-even %s [%s, %s]", scenario, load, lo, hi), scenario, "break-even", band, line)
	return plotLabel{text: "break-even " + load, x: be.Load, color: st.Color, tag: svgTag{Class: "label", Scenario: scenario}}, true
}

// breakEvenText is a load to three significant digits, as the crossover
// sentence writes it.
func breakEvenText(x float64) string { return fmt.Sprintf("%.3g", x) }

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
