package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Plot names of the speculative acceptance.
const (
	PlotAccept = "accept-length"
	// PlotAcceptPositions is followed by "-" and the scenario's name.
	PlotAcceptPositions = "accept-positions"
)

// hasAccept reports whether some level of some scenario has an accept
// length.
func hasAccept(v *verdict.Verdict) bool {
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.Accept != nil {
				return true
			}
		}
	}
	return false
}

// acceptPlot draws each speculative scenario's accept length by level with
// its interval across launches as error bars: flat while the throughput
// turns is the verify step's cost, not the drafts, growing with the batch.
func acceptPlot(v *verdict.Verdict) (*chart, error) {
	c := newLevelChart(v, v.Campaign+": accept length", "tokens per target step")
	lo, hi := 1.0, 1.0
	for _, s := range v.Scenarios {
		var xy plotter.XYs
		var errs plotter.YErrors
		for _, l := range s.Levels {
			if l.Accept == nil || measure.LevelValue(l.Level) <= 0 {
				continue
			}
			e := l.Accept.Length
			xy = append(xy, plotter.XY{X: measure.LevelValue(l.Level), Y: e.Center})
			errs = append(errs, struct{ Low, High float64 }{e.Center - e.Lo, e.Hi - e.Center})
			hi = max(hi, e.Hi)
		}
		if len(xy) == 0 {
			continue
		}
		st := styleOf(v, s.Name)
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
		c.add(s.Name, s.Name, "line", line, points, bars)
	}
	// One token per step is no speculation at all: the axis starts there.
	fitAxis(&c.p.Y, lo, hi, false, false)
	return c, nil
}

// acceptPositionBuilders is one plot per scenario whose responses gave the
// acceptance by draft position.
func acceptPositionBuilders(v *verdict.Verdict) []plotBuilder {
	var out []plotBuilder
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.Accept != nil && len(l.Accept.PositionRates) > 0 {
				name := s.Name
				out = append(out, plotBuilder{PlotAcceptPositions + "-" + htmlID(name), func(v *verdict.Verdict) (*chart, error) {
					return acceptPositionsPlot(v, name)
				}})
				break
			}
		}
	}
	return out
}

// acceptPositionsPlot draws, for one scenario, the share of verify steps
// whose k-th draft was accepted, one line per level: in the scenario's
// colour, lighter at the lower levels, each level its own marker.
func acceptPositionsPlot(v *verdict.Verdict, name string) (*chart, error) {
	c := newChart(fmt.Sprintf("%s: %s, drafts accepted by position", v.Campaign, name), "draft position", "share of steps accepting it")
	c.p.Add(newGrid())
	s := v.Scenario(name)
	st := styleOf(v, name)
	var levels []verdict.Level
	for _, l := range s.Levels {
		if l.Accept != nil && len(l.Accept.PositionRates) > 0 {
			levels = append(levels, l)
		}
	}
	most := 0
	for i, l := range levels {
		var xy plotter.XYs
		for k, r := range l.Accept.PositionRates {
			xy = append(xy, plotter.XY{X: float64(k + 1), Y: r})
		}
		most = max(most, len(xy))
		ls := st
		ls.Color = tint(st.Color, float64(i+1)/float64(len(levels)))
		ls.Dashes = nil
		ls.Shape = scenarioShapes[i%len(scenarioShapes)]
		line, points, err := ls.linePoints(xy)
		if err != nil {
			return nil, err
		}
		c.add(measure.LevelName(l.Level), "", "level", line, points)
	}
	var ticks []plot.Tick
	for k := 1; k <= most; k++ {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	c.p.X.Tick.Marker = plot.ConstantTicks(ticks)
	// A quarter of a position either side, so that the first and last markers
	// stand clear of the frame.
	c.p.X.Min, c.p.X.Max = 1-positionMargin, float64(max(most, 2))+positionMargin
	fitAxis(&c.p.Y, 0, 1, true, false)
	return c, nil
}

// positionMargin widens the draft position axis on both sides, in positions.
const positionMargin = 0.25

// tint is col mixed with white, to share as a fraction of it in (0, 1]:
// the levels of one scenario, lighter to darker as the load grows. The
// lightest keeps a third of the colour, so that it stays visible on white.
func tint(col color.NRGBA, share float64) color.NRGBA {
	const lightest = 1.0 / 3
	f := lightest + (1-lightest)*share
	mix := func(c uint8) uint8 { return uint8(math.Round(255 - f*(255-float64(c)))) }
	return color.NRGBA{R: mix(col.R), G: mix(col.G), B: mix(col.B), A: 0xff}
}
