package report

import (
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// PlotEnergy is the energy plot's name; it is drawn only for runs with
// power readings.
const PlotEnergy = "energy"

// energyPlot draws each scenario's GPU energy per 1000 output tokens
// against concurrency: lower is cheaper.
func energyPlot(v *verdict.Verdict) (*chart, error) {
	c := newLevelChart(v, v.Campaign+": GPU energy per 1000 output tokens", "J per 1000 tokens")
	return c, addLines(c, v, func(l verdict.Level) (float64, bool) {
		if l.Energy == nil {
			return 0, false
		}
		return l.Energy.JoulesPerKTok.Center, true
	})
}
