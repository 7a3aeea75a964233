package notes

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// TestFiguresNote: a scenario whose engine figures came from a worker
// behind the router says so, once, naming the role; one whose figures are
// its own server's says nothing.
func TestFiguresNote(t *testing.T) {
	v := &verdict.Verdict{Scenarios: []verdict.Scenario{{Name: "baseline"}, {Name: "pd-disagg"}}}
	in := records.Input{Launches: map[string][]records.Launch{
		"baseline":  {{Result: &results.ScenarioResult{}}, {Result: &results.ScenarioResult{}}},
		"pd-disagg": {{Result: &results.ScenarioResult{FiguresFrom: "decode"}}, {Result: &results.ScenarioResult{FiguresFrom: "decode"}}, {}},
	}}
	notes := checkFigures(v, in)
	if len(notes) != 1 {
		t.Fatalf("%d notes, want 1: %+v", len(notes), notes)
	}
	n := notes[0]
	if n.Scenario != "pd-disagg" || n.Check != verdict.CheckFigures || n.Severity != verdict.SeverityInfo ||
		!strings.Contains(n.Text, "those of role decode") || !strings.Contains(n.Text, "roles/decode/") {
		t.Errorf("note %+v", n)
	}
}
