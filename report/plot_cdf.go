package report

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

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
				data, err := encodePlot(p, ext)
				if err != nil {
					return nil, fmt.Errorf("plot %s.%s: %w", CDFPlotName(m.Name, c), ext, err)
				}
				out[CDFPlotName(m.Name, c)+"."+ext] = data
			}
		}
	}
	return out, nil
}

// cdfPlot draws m at level c, one line per scenario; ok is false when no
// scenario has m there.
func cdfPlot(v *verdict.Verdict, m cdfMetric, c measure.Level) (*plot.Plot, bool, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s at %s", v.Campaign, m.Title, measure.LevelName(c))
	p.X.Label.Text = m.Title + " (" + m.Unit + ")"
	p.Y.Label.Text = "share of values at or below"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	p.Add(plotter.NewGrid())
	var args []any
	for _, s := range v.Scenarios {
		l := s.Level(c)
		if l == nil || m.Of(l) == nil {
			continue
		}
		cdf := m.Of(l)
		xy := make(plotter.XYs, len(cdf.P))
		for i := range cdf.P {
			xy[i] = plotter.XY{X: cdf.Seconds[i] * m.Scale, Y: cdf.P[i]}
		}
		args = append(args, fmt.Sprintf("%s (n=%d)", s.Name, cdf.N), xy)
	}
	if len(args) == 0 {
		return nil, false, nil
	}
	if err := plotutil.AddLines(p, args...); err != nil {
		return nil, false, err
	}
	return p, true, nil
}
