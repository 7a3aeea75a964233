package notes

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestHostNote: a scenario whose comparisons a host doubt held undecided
// gets one warning naming each doubt once, the levels it covered and what
// to do; a scenario doubted for something else, or not at all, gets none.
func TestHostNote(t *testing.T) {
	held := verdict.Doubt{Kind: verdict.DoubtHost, Scenario: "eagle3", Text: "a GPU was held down during the sweep in round 2: GPU 3 in HW thermal slowdown for 12% of the sweep"}
	paced := verdict.Doubt{Kind: verdict.DoubtPace, Scenario: "fusion", Text: "over every launch the client held freed slots empty 9.0% of the time"}
	row := func(c int, doubts ...verdict.Doubt) verdict.Row {
		var cells []verdict.Cell
		for _, d := range doubts {
			cells = append(cells, verdict.Cell{Scenario: d.Scenario, Compared: true, Comparison: verdict.Comparison{Outcome: verdict.OutcomeDoubted, Doubts: []verdict.Doubt{d}}})
		}
		return verdict.Row{Level: measure.ConcurrencyLevel(c), Cells: append(cells, verdict.Cell{Scenario: "baseline"})}
	}
	v := &verdict.Verdict{Rows: []verdict.Row{row(1, held, paced), row(8, held), row(64)}}
	notes := checkHost(v)
	if len(notes) != 1 {
		t.Fatalf("%d notes, want one for eagle3: %+v", len(notes), notes)
	}
	n := notes[0]
	if n.Scenario != "eagle3" || n.Check != verdict.CheckHost || n.Severity != verdict.SeverityWarn ||
		strings.Count(n.Text, "GPU 3 in HW thermal slowdown") != 1 || !strings.Contains(n.Text, "at C=1, C=8 are doubted") ||
		!strings.Contains(n.Text, "--round K") {
		t.Errorf("note %+v", n)
	}
}
