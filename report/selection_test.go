package report

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// raceFixture is a race of four configurations at two levels, its figures
// fixed: spec.steps2 best at C=1 by 3%, off best at C=64 by 10% and more,
// spec.steps4 out of the race at both levels after the first stage, and a
// confirmation round after the race.
func raceFixture(t *testing.T) *verdict.Verdict {
	t.Helper()
	configs := []string{"off", "spec.steps1", "spec.steps2", "spec.steps4"}
	truth := [][]float64{{100, 900}, {104, 800}, {107, 780}, {80, 500}}
	wobble := []float64{0.004, -0.006, 0.002, -0.001, 0.005, -0.003, 0.001, -0.004}
	var rounds []selection.Round
	for r := range 8 {
		round := make(selection.Round, len(configs))
		for i := range configs {
			round[i] = make([]float64, 2)
			for c := range 2 {
				round[i][c] = math.Log(truth[i][c]) + wobble[(r+3*i+c)%len(wobble)]
			}
		}
		rounds = append(rounds, round)
	}
	res, _, err := selection.Replay(configs, []string{"C=1", "C=64"}, rounds, selection.Options{Delta: 0.02, FirstStage: 2, MaxRounds: 7})
	if err != nil {
		t.Fatal(err)
	}
	return &verdict.Verdict{Rounds: 8, Selection: res}
}

// TestSelectionText: the serving policy, the envelope and the race's
// picture, as the last screen shows them. Golden.
func TestSelectionText(t *testing.T) {
	v := raceFixture(t)
	if !v.Selection.Done {
		t.Fatalf("the fixture's race did not end: %+v", v.Selection)
	}
	var b bytes.Buffer
	if err := writeSelection(&b, v, 110); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "selection.txt"), b.Bytes())
}

// TestSelectionHTML: the page has the race's section, with its table and
// the configurations that left, each with why.
func TestSelectionHTML(t *testing.T) {
	v := raceFixture(t)
	secs := selectionHTML(v)
	if len(secs) != 1 || len(secs[0].Table.Rows) != 2 {
		t.Fatalf("sections %+v", secs)
	}
	want := "spec.steps4 left after round 2: behind spec.steps2 by 25.3% at C=1; behind off by 44.3% at C=64"
	if !slices.Contains(secs[0].Lines, want) {
		t.Errorf("lines %q lack %q", secs[0].Lines, want)
	}
	if selectionHTML(&verdict.Verdict{}) != nil {
		t.Error("a comparison has a race section")
	}
}
