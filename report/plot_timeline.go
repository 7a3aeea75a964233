package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

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

// timelineDashes are the series' line styles: the panel is one
// scenario's, drawn in its colour, so the series differ by line style.
var timelineDashes = map[string][]vg.Length{
	verdict.TimelineRunning: nil,
	verdict.TimelineQueued:  {vg.Points(6), vg.Points(3)},
	verdict.TimelineKVUsage: {vg.Points(1.5), vg.Points(2.5)},
}

// timelinePlot draws one scenario's server timeline at one level: each
// series as a line over seconds since the level's start, in the scenario's
// colour, the steady windows shaded behind them.
func timelinePlot(v *verdict.Verdict, scenario string, l *verdict.Level) (*chart, error) {
	tl := l.Timeline
	c := newChart(fmt.Sprintf("%s: %s at %s, round %d", v.Campaign, scenario, measure.LevelName(l.Level), tl.Round),
		"seconds since the level's first request", "requests; KV cache used, %")
	p := c.p
	p.X.Min, p.X.Max = 0, max(tl.Seconds, 1e-3)
	top := 1.0
	st := styleOf(v, scenario)
	type series struct {
		label string
		line  *plotter.Line
	}
	var lines []series
	for _, s := range tl.Series {
		lb := timelineLabels[s.Name]
		xy := make(plotter.XYs, len(s.T))
		for i := range s.T {
			xy[i] = plotter.XY{X: s.T[i], Y: s.V[i] * lb.scale}
			top = max(top, xy[i].Y)
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		line.LineStyle = st.line()
		line.LineStyle.Dashes = timelineDashes[s.Name]
		lines = append(lines, series{lb.label, line})
	}
	fitAxis(&p.Y, 0, top*timelineHeadroom, true, true)
	fitAxis(&p.X, 0, p.X.Max, true, false)
	p.Add(newGrid())
	for i, w := range tl.Windows {
		band := &vBand{lo: w.From, hi: w.To, Color: steadyShade}
		label := ""
		if i == 0 {
			label = "steady window"
		}
		c.add(label, "", "window", band)
	}
	for _, s := range lines {
		c.add(s.label, scenario, "series", s.line)
	}
	return c, nil
}
