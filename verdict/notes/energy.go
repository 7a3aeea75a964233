package notes

import (
	"maps"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// checkEnergy says once why a run has no energy figures where it has none:
// power not reported ([N/A]), no readings, or windows the readings did not
// cover. gaps are, per scenario, the levels without a figure and why
// (explain.Levels).
func checkEnergy(v *verdict.Verdict, in records.Input, gaps map[string][]string) []verdict.Note {
	var unavailable []string
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(in.Launches)) {
		for _, l := range in.Launches[name] {
			if l.Power != nil && l.Power.Unavailable != "" && !seen[l.Power.Unavailable] {
				seen[l.Power.Unavailable] = true
				unavailable = append(unavailable, l.Power.Unavailable)
			}
		}
	}
	var notes []verdict.Note
	if len(unavailable) > 0 {
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckEnergy,
			Text: "no energy figures where the GPUs report no power: " + strings.Join(unavailable, "; ")})
	}
	// One note per scenario, however many levels lack a figure.
	for _, sc := range v.Scenarios {
		if texts := gaps[sc.Name]; len(texts) > 0 {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckEnergy, Scenario: sc.Name,
				Text: sc.Name + ": no energy figure at " + strings.Join(texts, "; ")})
		}
	}
	return notes
}
