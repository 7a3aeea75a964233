package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// cdfMetric is one distribution drawn as a CDF per level: its name in the
// file names, its title, its unit and where a level keeps it.
type cdfMetric struct {
	Name, Title, Unit string
	Scale             float64 // seconds into Unit
	Of                func(l *verdict.Level) *measure.CDF
}

// cdfMetrics are the distributions drawn per level: the two a user feels,
// the wait for the first token and the stutter between the next ones.
var cdfMetrics = []cdfMetric{
	{"ttft", "TTFT", "s", 1, func(l *verdict.Level) *measure.CDF { return l.TTFTCDF }},
	{"itl", "ITL", "ms", 1e3, func(l *verdict.Level) *measure.CDF { return l.ITLCDF }},
}

// CDFPlotName is the file name, without extension, of metric's CDF plot at
// level: "cdf-itl-c30", "cdf-ttft-r2.5".
func CDFPlotName(metric string, level measure.Level) string {
	if measure.IsRate(level) {
		return "cdf-" + metric + "-r" + measure.FormatRate(level.Rate)
	}
	return fmt.Sprintf("cdf-%s-c%d", metric, level.Concurrency)
}

// CDFPlots returns, encoded by file name ("cdf-itl-c30.svg"), one plot per
// level and metric of cdfMetrics with a line per scenario that has the
// distribution there, drawn from the same points verdict.json holds
// (ttft_cdf, itl_cdf). A level where no scenario has it gets no plot.
func CDFPlots(v *verdict.Verdict) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, m := range cdfMetrics {
		for _, c := range v.Levels {
			p, ok, err := cdfPlot(v, m, c)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", CDFPlotName(m.Name, c), err)
			}
			if !ok {
				continue
			}
			for _, ext := range []string{"png", "svg"} {
				data, err := p.encode(ext)
				if err != nil {
					return nil, fmt.Errorf("plot %s.%s: %w", CDFPlotName(m.Name, c), ext, err)
				}
				out[CDFPlotName(m.Name, c)+"."+ext] = data
			}
		}
	}
	return out, nil
}

// cdfTail is the share of values the CDF axis shows: it ends a little past
// the largest scenario's p99.9, so that a rare stall does not squeeze the
// distributions into the axis's first tenth. verdict.json keeps the whole
// CDF, the maximum included.
const cdfTail = 0.999

// cdfHeadroom widens the CDF axis past the largest p99.9, as a factor.
const cdfHeadroom = 1.05

// cdfFromZero: an axis whose data start below this share of its end
// starts at 0, where a latency's scale begins; one whose data sit in a
// narrow range far from 0 starts at a round value below them.
const cdfFromZero = 0.4

// cdfPlot draws m at level c, one line per scenario in its style; ok is
// false when no scenario has m there. A metric kept in seconds whose tail
// ends under a second is drawn in ms, so that its ticks read 10, 20, 30
// rather than 0.01, 0.02, 0.03.
func cdfPlot(v *verdict.Verdict, m cdfMetric, c measure.Level) (*chart, bool, error) {
	type line struct {
		name string
		cdf  *measure.CDF
	}
	var lines []line
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range v.Scenarios {
		if l := s.Level(c); l != nil && m.Of(l) != nil && len(m.Of(l).P) > 0 {
			cdf := m.Of(l)
			lines = append(lines, line{s.Name, cdf})
			lo, hi = min(lo, cdf.Seconds[0]), max(hi, tailOf(cdf))
		}
	}
	if len(lines) == 0 {
		return nil, false, nil
	}
	unit, scale := m.Unit, m.Scale
	if unit == "s" && hi < 1 {
		unit, scale = "ms", 1e3
	}
	ch := newChart(fmt.Sprintf("%s: %s at %s", v.Campaign, m.Title, measure.LevelName(c)),
		fmt.Sprintf("%s (%s), to the p99.9", m.Title, unit), "share of values at or below")
	ch.p.Add(newGrid())
	for _, ln := range lines {
		xy := make(plotter.XYs, len(ln.cdf.P))
		for i := range ln.cdf.P {
			xy[i] = plotter.XY{X: ln.cdf.Seconds[i] * scale, Y: ln.cdf.P[i]}
		}
		pl, err := plotter.NewLine(xy)
		if err != nil {
			return nil, false, err
		}
		pl.LineStyle = styleOf(v, ln.name).line()
		ch.add(fmt.Sprintf("%s (n=%d)", ln.name, ln.cdf.N), ln.name, "line", pl)
	}
	lo, hi = lo*scale, hi*scale*cdfHeadroom
	fitAxis(&ch.p.X, lo, hi, lo < cdfFromZero*hi, false)
	fitAxis(&ch.p.Y, 0, 1, true, false)
	return ch, true, nil
}

// tailOf is the value at cdfTail of a CDF, in seconds: the first point at
// or past it.
func tailOf(c *measure.CDF) float64 {
	for i, p := range c.P {
		if p >= cdfTail {
			return c.Seconds[i]
		}
	}
	return c.Seconds[len(c.Seconds)-1]
}
