package report

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// energyHTML is the energy table beside the verdict table: per level, each
// scenario's GPU energy per 1000 output tokens ± its interval, with the mean
// power under it; nil when no level has power readings (the notes say why).
func energyHTML(v *verdict.Verdict) *hTable {
	if !v.HasEnergy() {
		return nil
	}
	t := &hTable{ID: "energy-table", Caption: "GPU energy per 1000 output tokens, joules, and mean GPU power; lower is cheaper"}
	t.Head = append(t.Head, hCell{Parts: []hPart{txt(levelHeader(v))}})
	var shown []verdict.Scenario
	for i, s := range v.Scenarios {
		if !s.Failed() {
			shown = append(shown, s)
			t.Head = append(t.Head, hCell{Scenario: s.Name, Swatch: swatchHTML(scenarioStyle(i)), Parts: []hPart{txt(s.Name + " J/1k tok")}})
		}
	}
	for _, c := range v.Levels {
		r := hRow{Level: dataLevel(c), Cells: []hCell{{Class: "level", Parts: []hPart{txt(measure.LevelLabel(c))}}}}
		for _, s := range shown {
			l := s.Level(c)
			if l == nil || l.Energy == nil {
				r.Cells = append(r.Cells, hCell{Class: "num missing", Scenario: s.Name, Parts: []hPart{txt("-")}})
				continue
			}
			r.Cells = append(r.Cells, energyCell(s.Name, c, "", l.Energy))
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// energyCell is "1512 ±2.1%" over "1180 W"; prefix tells the detail
// table's fields from the energy table's.
func energyCell(scenario string, level measure.Level, prefix string, e *verdict.LevelEnergy) hCell {
	j := e.JoulesPerKTok
	hw := j.HalfWidthPct()
	return hCell{Class: "num", Scenario: scenario,
		Title: fmt.Sprintf("%.0f%% interval %.0f to %.0f J per 1000 tokens", 100*j.Confidence, j.Lo, j.Hi),
		Parts: []hPart{
			num(prefix+"energy", scenario, level, 0, j.Center, fmt.Sprintf("%.0f", j.Center)),
			txt(" ±"), num(prefix+"energy-hw", scenario, level, 0, hw, hwText(hw)), txt("%"),
		},
		Sub: []hPart{num(prefix+"power", scenario, level, 0, e.PowerW.Center, fmt.Sprintf("%.0f", e.PowerW.Center)), txt(" W")},
	}
}

// hasEnergy reports whether any of the scenario's levels has energy.
func hasEnergy(s verdict.Scenario) bool {
	for _, l := range s.Levels {
		if l.Energy != nil {
			return true
		}
	}
	return false
}
