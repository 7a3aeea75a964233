package report

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// timelinePanels are level c's server timeline panels, one per scenario
// whose launch has a timeline there, in campaign order (the baseline among
// them), each with what the server summaries say about the steady windows
// under it; none for a run without timelines.
func timelinePanels(v *verdict.Verdict, c measure.Level) ([]hPlot, error) {
	var out []hPlot
	for _, s := range v.Scenarios {
		l := s.Level(c)
		if l == nil || l.Timeline == nil || len(l.Timeline.Series) == 0 {
			continue
		}
		p, err := timelinePlot(v, s.Name, l)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", TimelinePlotName(s.Name, c), err)
		}
		h, err := inlinePlot(TimelinePlotName(s.Name, c), p)
		if err != nil {
			return nil, err
		}
		h.Caption = timelineCaption(s.Name, l)
		out = append(out, h)
	}
	return out, nil
}

// timelineCaption says which launch the panel shows and, marked, the server's
// figures over the steady windows of all launches (Level.Server): the panel
// is one launch, the figures the level's.
func timelineCaption(scenario string, l *verdict.Level) []hPart {
	out := []hPart{txt(fmt.Sprintf("%s, round %d", scenario, l.Timeline.Round))}
	srv := l.Server
	if srv == nil {
		return out
	}
	var figs []hPart
	add := func(field, label string, g *measure.GaugeStats, scale float64, digits int, unit string) {
		if g == nil {
			return
		}
		if len(figs) > 0 {
			figs = append(figs, txt(", "))
		}
		figs = append(figs, txt(label+" "), num(field, scenario, l.Level, 0, g.Mean, fmt.Sprintf("%.*f", digits, g.Mean*scale)))
		if unit != "" {
			figs = append(figs, txt(unit))
		}
	}
	add(fieldServerRunning, "running", srv.Running, 1, 1, "")
	add(fieldServerQueued, "queued", srv.Queued, 1, 1, "")
	add(fieldServerKV, "KV used", srv.KVUsage, 100, 1, "%")
	if len(figs) == 0 {
		return out
	}
	out = append(out, txt("; steady-window means over the launches: "))
	return append(out, figs...)
}
