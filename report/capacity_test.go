package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/slo"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// sloVerdict is a run of the baseline and EAGLE-3 topk=4 under the issue's
// example objective: on the small sweep (1, 2, 5, 30) the baseline meets it
// at every level (a capacity above 30), EAGLE-3 between 5 and 30.
func sloVerdict(t *testing.T, rounds int) *verdict.Verdict {
	t.Helper()
	v, _ := verdictOf(t, sloRun(t, rounds, 3, 1))
	return v
}

// sloRun writes the run sloVerdict judges, the baseline's steps slowdown
// times longer.
func sloRun(t *testing.T, rounds int, seed uint64, slowdown float64) *results.Run {
	t.Helper()
	s := smallSweep()
	base := verdicttest.RealisticNoise(verdicttest.Baseline)
	base.Slowdown = slowdown
	launches := verdicttest.Campaign([]verdicttest.Engine{base,
		verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)}, s, rounds, seed)
	per := [][][]measure.Record{make([][]measure.Record, rounds), make([][]measure.Record, rounds)}
	for _, l := range launches {
		per[l.Scenario][l.Round-1] = l.Records
	}
	m := verdicttest.Manifest("kimi-k25-eagle3", "20260101T000000Z", "sha256:aaaa", "baseline", s, "baseline", "eagle3-topk4")
	m.Rounds = rounds
	m.SLO = &slo.SLO{Bounds: map[string]float64{slo.TTFT: 2, slo.TPOT: 0.06}}
	run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
		{Name: "baseline", Rounds: per[0]}, {Name: "eagle3-topk4", Rounds: per[1]}})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestGoldenSLO(t *testing.T) {
	v := sloVerdict(t, verdict.DefaultRounds)
	one := sloVerdict(t, 1)
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"slo.txt", func(b *bytes.Buffer) error { return Text(b, v) }},
		{"slo.md", func(b *bytes.Buffer) error { return Markdown(b, v) }},
		{"capacity.csv", func(b *bytes.Buffer) error { return CapacityCSV(b, v) }},
		{"slo-one-round.txt", func(b *bytes.Buffer) error { return Text(b, one) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name), b.Bytes())
		})
	}
	// The sentences say what the figures say: the baseline's capacity is a
	// bound above the top level, and it wins.
	cc := v.Capacity.Comparisons[0]
	if !strings.Contains(cc.Sentence, "baseline serves >30 concurrent users") || cc.Winner != "baseline" {
		t.Errorf("sentence %q, winner %q", cc.Sentence, cc.Winner)
	}
	if c := one.Capacity.Comparisons[0]; c.Outcome != verdict.OutcomeInconclusive || !strings.Contains(c.Sentence, "not measured") {
		t.Errorf("one round: %s", c.Sentence)
	}
}

// TestCapacityJSON: verdict.json carries the capacity under a stable field.
func TestCapacityJSON(t *testing.T) {
	v := sloVerdict(t, 2)
	var b bytes.Buffer
	if err := JSON(&b, v); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Capacity struct {
			Objective string `json:"objective"`
			Unit      string `json:"unit"`
			Scenarios []struct {
				Scenario string `json:"scenario"`
				Capacity struct {
					Center, Lo, Hi float64
				} `json:"capacity"`
				Bound string `json:"bound"`
				Text  string `json:"text"`
			} `json:"scenarios"`
			Comparisons []struct {
				Variant, Outcome, Sentence string
			} `json:"comparisons"`
		} `json:"capacity"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	c := back.Capacity
	if c.Objective != "ttft_p99 ≤ 2s and tpot_p99 ≤ 60ms" || c.Unit != "concurrent users" || len(c.Scenarios) != 2 ||
		len(c.Comparisons) != 1 || c.Comparisons[0].Sentence != v.Capacity.Comparisons[0].Sentence {
		t.Errorf("verdict.json capacity: %+v", c)
	}
	if s := c.Scenarios[1]; s.Scenario != "eagle3-topk4" || !(s.Capacity.Lo <= s.Capacity.Center && s.Capacity.Center <= s.Capacity.Hi) || s.Capacity.Center <= 5 || s.Capacity.Center >= 30 {
		t.Errorf("eagle3-topk4's capacity: %+v", s)
	}
}

// TestNoSLONoCapacity: without an objective nothing about capacity is
// written.
func TestNoSLONoCapacity(t *testing.T) {
	v, _ := testVerdict(t)
	if v.Capacity != nil {
		t.Fatal("capacity without an objective")
	}
	var b bytes.Buffer
	if err := JSON(&b, v); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(`"capacity"`)) {
		t.Error("verdict.json has a capacity field without an objective")
	}
}

// TestDiffCapacity: diff compares the capacities too, in the same family:
// EAGLE-3's capacity, unchanged between two runs, is no regression; the
// same campaign with the baseline 20% slower per step lowers the baseline's
// capacity, which diff cannot judge (above the top level in the old run, a
// bound) and EAGLE-3's not at all.
func TestDiffCapacity(t *testing.T) {
	old := sloRun(t, 3, 21, 1)
	same := sloRun(t, 3, 22, 1)
	// Three runs of history with no run effect: the capacities are judged.
	d, err := rundiff.Compare(old, same, rundiff.Options{History: []*results.Run{old, sloRun(t, 3, 23, 1), sloRun(t, 3, 24, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Capacity == nil || len(d.Capacity.Rows) != 2 {
		t.Fatalf("capacity diff %+v", d.Capacity)
	}
	for _, r := range d.Capacity.Rows {
		if r.Regression || r.Outcome == verdict.OutcomeFaster || r.Outcome == verdict.OutcomeSlower {
			t.Errorf("A/A: %s capacity %s → %s: %s", r.Scenario, r.Old, r.New, r.Outcome)
		}
	}
	if r := d.Capacity.Rows[0]; r.Scenario != "baseline" || r.Outcome != verdict.OutcomeInconclusive {
		t.Errorf("the baseline's capacity is a bound in both runs: %+v", r)
	}
	d.OldRun, d.NewRun = "old", "new" // not the temporary paths
	var b bytes.Buffer
	if err := DiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "diff-capacity.txt"), b.Bytes())
}

// TestDiffCapacityRegression: a variant whose capacity fell by a fifth is a
// regression.
func TestDiffCapacityRegression(t *testing.T) {
	mk := func(seed uint64, slowdown float64) *results.Run {
		s := smallSweep()
		e := verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)
		e.Slowdown = slowdown
		launches := verdicttest.Campaign([]verdicttest.Engine{e}, s, 3, seed)
		per := make([][]measure.Record, 3)
		for _, l := range launches {
			per[l.Round-1] = l.Records
		}
		m := verdicttest.Manifest("c", "20260101T000000Z", "sha256:aaaa", "eagle3-topk4", s, "eagle3-topk4")
		m.Rounds = 3
		m.SLO = &slo.SLO{Bounds: map[string]float64{slo.TTFT: 2, slo.TPOT: 0.06}}
		run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{{Name: "eagle3-topk4", Rounds: per}})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	old := mk(31, 1)
	d, err := rundiff.Compare(old, mk(32, 1.25), rundiff.Options{History: []*results.Run{old, mk(33, 1), mk(34, 1), mk(35, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	r := d.Capacity.Rows[0]
	if !r.Regression || !d.Regressed() {
		t.Errorf("capacity %s → %s (%s, %s): want a regression", r.Old, r.New, verdict.Pct(r.DeltaPct), r.Outcome)
	}
}
