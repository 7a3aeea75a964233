package report

import (
	"bytes"
	"fmt"
	"html/template"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// hLevelPlots are one level's plots on the page, under its name.
type hLevelPlots struct {
	Level int
	Name  string
	Plots []hPlot
}

// levelPlotsHTML are each level's plots, inline: the latency distributions
// (the CDF plots plot_cdf.go writes as files), then the server timeline
// panels (html_timeline.go); none when no level has one.
func levelPlotsHTML(v *verdict.Verdict) ([]hLevelPlots, error) {
	var out []hLevelPlots
	for _, c := range v.Levels {
		lp := hLevelPlots{Level: dataLevel(c), Name: measure.LevelName(c)}
		for _, m := range cdfMetrics {
			p, ok, err := cdfPlot(v, m, c)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", CDFPlotName(m.Name, c), err)
			}
			if !ok {
				continue
			}
			h, err := inlinePlot(CDFPlotName(m.Name, c), p)
			if err != nil {
				return nil, err
			}
			lp.Plots = append(lp.Plots, h)
		}
		panels, err := timelinePanels(v, c)
		if err != nil {
			return nil, err
		}
		lp.Plots = append(lp.Plots, panels...)
		if len(lp.Plots) > 0 {
			out = append(out, lp)
		}
	}
	return out, nil
}

// inlinePlot is c as SVG ready to inline: no prolog, no fixed size.
func inlinePlot(name string, c *chart) (hPlot, error) {
	data, err := c.encode("svg")
	if err != nil {
		return hPlot{}, fmt.Errorf("plot %s.svg: %w", name, err)
	}
	i := bytes.Index(data, []byte("<svg"))
	if i < 0 {
		return hPlot{}, fmt.Errorf("plot %s.svg: no <svg> element", name)
	}
	data = svgSize.ReplaceAll(data[i:], []byte(`<svg class="plot" role="img" aria-label="`+template.HTMLEscapeString(c.title)+`"`))
	return hPlot{Name: name, Title: c.title, SVG: template.HTML(data)}, nil
}
