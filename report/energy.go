package report

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

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
