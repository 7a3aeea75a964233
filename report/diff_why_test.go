package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// whyRun is a campaign of the baseline and EAGLE-3 topk=4 drafting accept
// tokens a step, five rounds, with each launch's verify steps and server
// timeline (verdicttest.Scenario's Speculative and Server).
func whyRun(t *testing.T, seed uint64, accept float64) *results.Run {
	t.Helper()
	s := smallSweep()
	eagle := verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)
	eagle.AcceptLength = accept
	const rounds = fixtureRounds
	per := [][][]measure.Record{make([][]measure.Record, rounds), make([][]measure.Record, rounds)}
	for _, l := range verdicttest.Campaign([]verdicttest.Engine{verdicttest.RealisticNoise(verdicttest.Baseline), eagle}, s, rounds, seed) {
		per[l.Scenario][l.Round-1] = l.Records
	}
	m := verdicttest.Manifest("why", "20260101T000000Z", "sha256:aaaa", "baseline", s, "baseline", "eagle3-topk4")
	m.Rounds = rounds
	run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
		{Name: "baseline", Rounds: per[0], Server: true},
		{Name: "eagle3-topk4", Rounds: per[1], Server: true, Speculative: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestDiffWhy: diff compares the accept length of both runs' launches,
// flagging a drop from 2.3 to 1.9 tokens a step at every level and nothing
// between two runs of the same engine, and the servers' batch and
// generation throughput; the whole diff is a golden file.
func TestDiffWhy(t *testing.T) {
	old := whyRun(t, 45, 2.3)
	for _, tc := range []struct {
		name    string
		accept  float64
		changed bool
		golden  string
	}{
		{"same", 2.3, false, ""},
		{"fewer accepted", 1.9, true, "diff-why.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := rundiff.Compare(old, whyRun(t, 43, tc.accept), rundiff.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Accept) != 4 || len(d.Server) != 8 {
				t.Fatalf("%d accept rows and %d server rows, want 4 and 8", len(d.Accept), len(d.Server))
			}
			for _, r := range d.Accept {
				if r.Changed != tc.changed {
					t.Errorf("%s: %.3f [%.3f, %.3f] → %.3f [%.3f, %.3f], p %.3g adjusted %.3g: changed %v, want %v", measure.LevelName(r.Level),
						r.Old.Center, r.Old.Lo, r.Old.Hi, r.New.Center, r.New.Lo, r.New.Hi, r.P, r.PAdjusted, r.Changed, tc.changed)
				}
			}
			for _, r := range d.Server {
				if r.OldRunning == nil || r.NewGenTokS == nil {
					t.Errorf("%s %s: server row %+v", r.Scenario, measure.LevelName(r.Level), r)
				}
			}
			if tc.golden == "" {
				return
			}
			d.OldRun, d.NewRun = "old", "new"
			var b bytes.Buffer
			if err := DiffText(&b, d); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.golden), b.Bytes())
		})
	}
}

// TestDiffAcceptNoFalseAlarms: between two runs of the same engine the
// accept-length table flags a change in at most 3 of 20 diffs. A correct
// test at 5% over the table flags about one; the rule it replaced (each
// run's figure outside the other's 95% interval, level by level, no
// correction) flagged a level in 6 of these 20, and must fail the bound:
// it shows the bound can tell the two apart.
func TestDiffAcceptNoFalseAlarms(t *testing.T) {
	const pairs, allowed = 20, 3
	alarms, oldRule := 0, 0
	for i := range uint64(pairs) {
		d, err := rundiff.Compare(whyRun(t, 500+2*i, 2.3), whyRun(t, 501+2*i, 2.3), rundiff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range d.Accept {
			if r.Changed {
				alarms++
				t.Logf("pair %d: %s %s changed, p %.3g adjusted %.3g", i, r.Scenario, measure.LevelName(r.Level), r.P, r.PAdjusted)
				break
			}
		}
		for _, r := range d.Accept {
			if outside(r.New.Center, r.Old) && outside(r.Old.Center, r.New) {
				oldRule++
				break
			}
		}
	}
	t.Logf("a change flagged in %d of %d diffs of like runs; each figure outside the other's interval in %d", alarms, pairs, oldRule)
	if alarms > allowed {
		t.Errorf("a change flagged in %d of %d diffs of like runs, at most %d allowed", alarms, pairs, allowed)
	}
	if oldRule <= allowed {
		t.Errorf("the uncorrected interval rule flags %d of %d, within the bound: the bound has no teeth", oldRule, pairs)
	}
}

// outside reports whether x lies outside e's interval.
func outside(x float64, e verdict.Estimate) bool { return x < e.Lo || x > e.Hi }
