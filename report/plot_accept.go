package report

import (
	"fmt"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

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
func acceptPlot(v *verdict.Verdict) (*plot.Plot, error) {
	p := newLevelPlot(v, v.Campaign+": accept length", "tokens per target step")
	i := 0
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
		}
		if len(xy) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		col := plotutil.Color(i)
		i++
		line.Color, points.Color = col, col
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{xy, errs})
		if err != nil {
			return nil, err
		}
		bars.Color = col
		p.Add(line, points, bars)
		p.Legend.Add(s.Name, line, points)
	}
	p.Y.Min = min(p.Y.Min, 1)
	return p, nil
}

// acceptPositionBuilders is one plot per scenario whose responses gave the
// acceptance by draft position.
func acceptPositionBuilders(v *verdict.Verdict) []plotBuilder {
	var out []plotBuilder
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.Accept != nil && len(l.Accept.PositionRates) > 0 {
				name := s.Name
				out = append(out, plotBuilder{PlotAcceptPositions + "-" + htmlID(name), func(v *verdict.Verdict) (*plot.Plot, error) {
					return acceptPositionsPlot(v, name)
				}})
				break
			}
		}
	}
	return out
}

// acceptPositionsPlot draws, for one scenario, the share of verify steps
// whose k-th draft was accepted, one line per level.
func acceptPositionsPlot(v *verdict.Verdict, name string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s, drafts accepted by position", v.Campaign, name)
	p.X.Label.Text = "draft position"
	p.Y.Label.Text = "share of steps accepting it"
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	s := v.Scenario(name)
	var args []any
	most := 0
	for _, l := range s.Levels {
		if l.Accept == nil || len(l.Accept.PositionRates) == 0 {
			continue
		}
		var xy plotter.XYs
		for k, r := range l.Accept.PositionRates {
			xy = append(xy, plotter.XY{X: float64(k + 1), Y: r})
		}
		most = max(most, len(xy))
		args = append(args, measure.LevelName(l.Level), xy)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	var ticks []plot.Tick
	for k := 1; k <= most; k++ {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = 0, 1
	return p, nil
}
