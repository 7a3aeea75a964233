package report

import (
	"fmt"

	"gonum.org/v1/plot"

	"github.com/bakeoff-dev/bakeoff/measure"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// PlotEnergy is the energy plot's name; it is drawn only for runs with
// power readings.
const PlotEnergy = "energy"

// energyDetail is a level's energy for its detail line: " | energy: 1512
// J/1k tok ±2.1% at 1180 W", or "" without power readings.
func energyDetail(l verdict.Level) string {
	if l.Energy == nil {
		return ""
	}
	return fmt.Sprintf(" | energy: %.0f J/1k tok ±%s at %.0f W", l.Energy.JoulesPerKTok.Center,
		halfWidth(l.Energy.JoulesPerKTok), l.Energy.PowerW.Center)
}

// addEnergyColumns appends mean power and energy per 1000 tokens to a
// scenario's detail table, when any of its levels has them: GPUs that
// report no power get no column (the notes say why).
func addEnergyColumns(t *table, s verdict.Scenario) {
	has := false
	for _, l := range s.Levels {
		has = has || l.Energy != nil
	}
	if !has {
		return
	}
	t.Header = append(t.Header, "GPU W", "J/1k tok")
	for i, l := range s.Levels {
		w, j := "-", "-"
		if l.Energy != nil {
			w, j = fmt.Sprintf("%.0f", l.Energy.PowerW.Center), fmt.Sprintf("%.0f ±%s", l.Energy.JoulesPerKTok.Center, halfWidth(l.Energy.JoulesPerKTok))
		}
		t.Rows[i] = append(t.Rows[i], w, j)
	}
}

// energyCSV is a level's energy columns (CSVEnergyHeader), empty without
// power readings.
func energyCSV(l *verdict.Level, f func(float64) string) []string {
	if l.Energy == nil {
		return []string{"", "", "", ""}
	}
	j := l.Energy.JoulesPerKTok
	return []string{f(l.Energy.PowerW.Center), f(j.Center), f(j.Lo), f(j.Hi)}
}

// csvEnergyHeader names energyCSV's columns.
var csvEnergyHeader = []string{"power_w", "joules_per_1k_tok", "joules_per_1k_tok_lo", "joules_per_1k_tok_hi"}

// energyPlot draws each scenario's GPU energy per 1000 output tokens
// against concurrency: lower is cheaper.
func energyPlot(v *verdict.Verdict) (*plot.Plot, error) {
	p := newLevelPlot(v, v.Campaign+": GPU energy per 1000 output tokens", "J per 1000 tokens")
	return p, addLines(p, v, func(l verdict.Level) (float64, bool) {
		if l.Energy == nil {
			return 0, false
		}
		return l.Energy.JoulesPerKTok.Center, true
	})
}

// energyTable is the energy beside the main table: per level, each
// scenario's GPU energy per 1000 output tokens with its interval and mean
// power; nil without power readings.
func energyTable(v *verdict.Verdict) *table {
	if !v.HasEnergy() {
		return nil
	}
	t := &table{Header: []string{levelHeader(v)}}
	var shown []verdict.Scenario
	for _, s := range v.Scenarios {
		if !s.Failed() {
			shown = append(shown, s)
			t.Header = append(t.Header, s.Name+" J/1k tok")
		}
	}
	for _, c := range v.Levels {
		r := []string{measure.LevelLabel(c)}
		for _, s := range shown {
			cell := "-"
			if l := s.Level(c); l != nil && l.Energy != nil {
				cell = fmt.Sprintf("%.0f ±%s (%.0f W)", l.Energy.JoulesPerKTok.Center, halfWidth(l.Energy.JoulesPerKTok), l.Energy.PowerW.Center)
			}
			r = append(r, cell)
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}
