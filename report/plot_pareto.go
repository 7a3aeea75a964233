package report

import (
	"cmp"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// PlotPareto is the Pareto plot's name: throughput per GPU against output
// tokens per second per user, every scenario's levels, its own frontier
// and the frontier of all.
const PlotPareto = "pareto"

// How the overall frontier is drawn, in points: a wide grey band under the
// scenarios' own lines, so that it reads as the envelope they touch, and a
// ring around each optimal point, wider than a scenario's marker.
const (
	paretoFrontierWidth = 6
	paretoRingRadius    = plotGlyphSize + 2.5
)

// paretoFrontierColor is the overall frontier's band: light enough that
// the scenarios' lines and markers stay readable over it.
var paretoFrontierColor = color.Gray{Y: 0xc8}

// paretoPlot draws each scenario's levels as its markers, joined along the
// scenario's own frontier (the levels no other of its levels beats on both
// axes), over the frontier of all the scenarios' levels, whose points are
// ringed. A level whose measurement is doubted is drawn, never joined.
func paretoPlot(v *verdict.Verdict) (*chart, error) {
	p := v.Pareto
	what := "throughput per GPU"
	if !p.PerGPU {
		what = "throughput per server"
	}
	c := newChart(v.Campaign+": "+what+" against tokens per second per user", paretoXLabel, paretoYLabel(p))
	c.p.Add(newGrid())
	xs := func(pts []verdict.ParetoPoint) plotter.XYs {
		slices.SortStableFunc(pts, func(a, b verdict.ParetoPoint) int { return cmp.Compare(a.PerUser, b.PerUser) })
		xy := make(plotter.XYs, len(pts))
		for i, pt := range pts {
			xy[i] = plotter.XY{X: pt.PerUser, Y: pt.TokS}
		}
		return xy
	}
	if opt := xs(p.Optimal()); len(opt) > 0 {
		band, err := plotter.NewLine(opt)
		if err != nil {
			return nil, err
		}
		band.LineStyle = draw.LineStyle{Color: paretoFrontierColor, Width: vg.Points(paretoFrontierWidth)}
		rings, err := plotter.NewScatter(opt)
		if err != nil {
			return nil, err
		}
		rings.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(paretoRingRadius), Shape: draw.RingGlyph{}}
		c.add("Pareto frontier, all scenarios", "", "frontier", band, rings)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	loX, hiX := math.Inf(1), math.Inf(-1)
	for _, s := range v.Scenarios {
		var all, own []verdict.ParetoPoint
		for _, pt := range p.Points {
			if pt.Scenario != s.Name {
				continue
			}
			all = append(all, pt)
			if pt.Own {
				own = append(own, pt)
			}
		}
		if len(all) == 0 {
			leftOut(c, s, "no level with a throughput and a TPOT")
			continue
		}
		st := styleOf(v, s.Name)
		pts := xs(all)
		marks, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		marks.GlyphStyle = st.glyph()
		if len(own) == 0 { // every level doubted: markers alone
			c.add(s.Name, s.Name, "points", marks)
		} else {
			line, err := plotter.NewLine(xs(own))
			if err != nil {
				return nil, err
			}
			line.LineStyle = st.line()
			c.add(s.Name, s.Name, "line", line, marks)
		}
		lo, hi = min(lo, minY(pts)), max(hi, maxY(pts))
		for _, xy := range pts {
			loX, hiX = min(loX, xy.X), max(hiX, xy.X)
		}
	}
	fitAxis(&c.p.X, loX, hiX, true, false)
	fitAxis(&c.p.Y, lo, hi, true, false)
	return c, nil
}
