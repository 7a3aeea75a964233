package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
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

// TestDiffWhy: diff compares the accept length with both runs' intervals,
// flagging a drop from 2.3 to 1.9 tokens a step at every level, and the
// servers' batch and generation throughput; the whole diff is a golden
// file. Between two runs of the same engine at most one level of four is
// flagged: the flag is a hint beside the tested throughput, and two 95%
// intervals that each miss the other's center still happen by chance (here
// at C=2 for every seed tried).
func TestDiffWhy(t *testing.T) {
	old := whyRun(t, 45, 2.3)
	for _, tc := range []struct {
		name   string
		accept float64
		beyond bool
		golden string
	}{
		{"same", 2.3, false, ""},
		{"fewer accepted", 1.9, true, "diff-why.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := verdict.Diff(old, whyRun(t, 43, tc.accept), verdict.DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Accept) != 4 || len(d.Server) != 8 {
				t.Fatalf("%d accept rows and %d server rows, want 4 and 8", len(d.Accept), len(d.Server))
			}
			flagged := 0
			for _, r := range d.Accept {
				if r.Beyond {
					flagged++
				}
				if r.Beyond != tc.beyond && !(r.Beyond && flagged == 1) {
					t.Errorf("%s: %.3f [%.3f, %.3f] → %.3f [%.3f, %.3f]: beyond %v, want %v", measure.LevelName(r.Level),
						r.Old.Center, r.Old.Lo, r.Old.Hi, r.New.Center, r.New.Lo, r.New.Hi, r.Beyond, tc.beyond)
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
