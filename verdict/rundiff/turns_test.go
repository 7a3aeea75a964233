package rundiff

import (
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestDiffTurns: each turn's TTFT p50 of both runs side by side, for the
// levels both ran with sessions and neither saturated.
func TestDiffTurns(t *testing.T) {
	c2, c4 := measure.ConcurrencyLevel(2), measure.ConcurrencyLevel(4)
	sessions := func(ttft ...float64) *measure.SessionSummary {
		s := &measure.SessionSummary{}
		for i, x := range ttft {
			s.ByTurn = append(s.ByTurn, measure.TurnSummary{Turn: i + 1, TTFT: measure.Dist{P50: x}})
		}
		return s
	}
	old := &verdict.Verdict{Scenarios: []verdict.Scenario{
		{Name: "a", Levels: []verdict.Level{{Level: c2, Sessions: sessions(0.1, 0.02)}, {Level: c4, Sessions: sessions(0.2, 0.04)}}},
		{Name: "gone", Levels: []verdict.Level{{Level: c2, Sessions: sessions(0.1)}}},
	}}
	new := &verdict.Verdict{Scenarios: []verdict.Scenario{
		{Name: "a", Levels: []verdict.Level{{Level: c2, Sessions: sessions(0.1, 0.01, 0.01)}, {Level: c4, Saturated: true, Sessions: sessions(0.9, 0.9)}}},
	}}
	got := diffTurns(old, new)
	want := []TurnRow{
		{Scenario: "a", Level: c2, Turn: 1, OldTTFT: 0.1, NewTTFT: 0.1, ChangePct: 0},
		{Scenario: "a", Level: c2, Turn: 2, OldTTFT: 0.02, NewTTFT: 0.01, ChangePct: -50},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Scenario != w.Scenario || g.Level != w.Level || g.Turn != w.Turn || g.OldTTFT != w.OldTTFT || g.NewTTFT != w.NewTTFT ||
			g.ChangePct < w.ChangePct-1e-9 || g.ChangePct > w.ChangePct+1e-9 {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
}
