package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// steadyShade fills a level's steady window on its timeline panel: light
// enough that the lines stay readable over it.
var steadyShade = color.NRGBA{R: 0x59, G: 0x63, B: 0x6e, A: 40}

// timelineHeadroom lifts the panel's top above its highest value, as a
// factor, so a flat series does not run along the frame.
const timelineHeadroom = 1.1

// timelineLabels are the panel's legend entries per series: the KV cache's
// used fraction is drawn in percent, so that it shares the axis with the
// requests (a batch of tens, a cache filled to tens of percent).
var timelineLabels = map[string]struct {
	label string
	scale float64
}{
	verdict.TimelineRunning: {"running requests", 1},
	verdict.TimelineQueued:  {"queued requests", 1},
	verdict.TimelineKVUsage: {"KV cache used, %", 100},
}

// TimelinePlotName is the name of a scenario's timeline panel at level:
// "timeline-eagle3-c30", "timeline-eagle3-r2.5".
func TimelinePlotName(scenario string, level measure.Level) string {
	if measure.IsRate(level) {
		return "timeline-" + htmlID(scenario) + "-r" + measure.FormatRate(level.Rate)
	}
	return fmt.Sprintf("timeline-%s-c%d", htmlID(scenario), level.Concurrency)
}

// timelinePlot draws one scenario's server timeline at one level: each
// series as a line over seconds since the level's start, the steady windows
// shaded behind them.
func timelinePlot(v *verdict.Verdict, scenario string, l *verdict.Level) (*plot.Plot, error) {
	tl := l.Timeline
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s at %s, round %d", v.Campaign, scenario, measure.LevelName(l.Level), tl.Round)
	p.X.Label.Text = "seconds since the level's first request (steady window shaded)"
	p.Y.Label.Text = "requests; KV cache used, %"
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Min, p.X.Max = 0, max(tl.Seconds, 1e-3)
	top := 1.0
	var args []any
	for _, s := range tl.Series {
		lb := timelineLabels[s.Name]
		xy := make(plotter.XYs, len(s.T))
		for i := range s.T {
			xy[i] = plotter.XY{X: s.T[i], Y: s.V[i] * lb.scale}
			top = max(top, xy[i].Y)
		}
		args = append(args, lb.label, xy)
	}
	p.Y.Min, p.Y.Max = 0, top*timelineHeadroom
	p.Add(plotter.NewGrid())
	for _, w := range tl.Windows {
		band, err := plotter.NewPolygon(plotter.XYs{{X: w.From, Y: 0}, {X: w.To, Y: 0}, {X: w.To, Y: p.Y.Max}, {X: w.From, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		band.Color = steadyShade
		band.LineStyle.Width = 0
		p.Add(band)
	}
	if err := plotutil.AddLines(p, args...); err != nil {
		return nil, err
	}
	return p, nil
}
