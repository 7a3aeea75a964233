package notes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// checkHost names, per scenario, the host doubts (verdict.DoubtHost) on its
// comparisons: a GPU held down during its sweep, or a host busy as its
// sweep began and quiet as the other side's did, each with the rounds and
// readings the doubt gives and the levels it left undecided. The cell says
// only "doubted: host"; a reader deciding whether to rerun a round needs
// which round and why.
func checkHost(v *verdict.Verdict) []verdict.Note {
	type doubted struct {
		texts  []string
		levels []measure.Level
	}
	by := map[string]*doubted{}
	var order []string
	for _, row := range v.Rows {
		for _, c := range row.Cells {
			for _, d := range c.Doubts {
				if d.Kind != verdict.DoubtHost {
					continue
				}
				x := by[d.Scenario]
				if x == nil {
					x = &doubted{}
					by[d.Scenario] = x
					order = append(order, d.Scenario)
				}
				if !slices.Contains(x.texts, d.Text) {
					x.texts = append(x.texts, d.Text)
				}
				if !slices.Contains(x.levels, row.Level) {
					x.levels = append(x.levels, row.Level)
				}
			}
		}
	}
	var notes []verdict.Note
	for _, name := range order {
		x := by[name]
		levels := make([]string, len(x.levels))
		for i, c := range x.levels {
			levels[i] = measure.LevelName(c)
		}
		notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckHost, Scenario: name,
			Text: fmt.Sprintf("%s: %s; its comparisons at %s are doubted, not decided: %s",
				name, strings.Join(x.texts, "; "), strings.Join(levels, ", "), verdict.DoubtAdvice(verdict.DoubtHost))})
	}
	return notes
}
