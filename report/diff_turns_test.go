package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// TestTurnsDiffText: a diff of two sessions runs sets each turn's TTFT side
// by side, and a diff without sessions writes nothing of it.
func TestTurnsDiffText(t *testing.T) {
	c3 := measure.ConcurrencyLevel(3)
	d := &rundiff.Result{Turns: []rundiff.TurnRow{
		{Scenario: "cached", Level: c3, Turn: 1, OldTTFT: 0.060, NewTTFT: 0.058, ChangePct: -3.3},
		{Scenario: "cached", Level: c3, Turn: 2, OldTTFT: 0.0057, NewTTFT: 0.031, ChangePct: 443.9, OldCached: new(0.98), NewCached: new(0.0)},
	}}
	var b bytes.Buffer
	if err := turnsDiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "diff-turns.txt"), b.Bytes())
	b.Reset()
	if err := turnsDiffText(&b, &rundiff.Result{}); err != nil || b.Len() != 0 {
		t.Errorf("without sessions: %q (%v)", b.String(), err)
	}
}
