package verdict

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

func TestWinner(t *testing.T) {
	get := func(outcomes map[[2]int]string) func(i, j int) (Comparison, bool) {
		return func(i, j int) (Comparison, bool) {
			if o, ok := outcomes[[2]int{i, j}]; ok {
				return Comparison{Outcome: o}, true
			}
			return Comparison{}, false
		}
	}
	for _, tc := range []struct {
		name       string
		centers    []float64
		outcomes   map[[2]int]string // [i, j]: j against i
		outcome    string
		winner     string
		tied       int
		unresolved int
	}{
		{"clear winner", []float64{100, 110}, map[[2]int]string{{0, 1}: OutcomeFaster}, RowWinner, "b", 0, 0},
		{"tie", []float64{100, 100.2}, map[[2]int]string{{0, 1}: OutcomeTie}, RowTie, "", 2, 0},
		{"cannot tell", []float64{100, 103}, map[[2]int]string{{0, 1}: OutcomeInconclusive}, RowInconclusive, "", 0, 2},
		{"ahead of one, unresolved with the other", []float64{100, 110, 109},
			map[[2]int]string{{0, 1}: OutcomeFaster, {2, 1}: OutcomeInconclusive}, RowInconclusive, "", 0, 2},
		{"two tied at the top, ahead of the third", []float64{100, 110, 109.9},
			map[[2]int]string{{0, 1}: OutcomeFaster, {2, 1}: OutcomeTie}, RowTie, "", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := Row{}
			var present []int
			for i, c := range tc.centers {
				row.Cells = append(row.Cells, Cell{Scenario: string(rune('a' + i)), Throughput: Estimate{Center: c}})
				present = append(present, i)
			}
			pickWinner(&row, present, get(tc.outcomes))
			if row.Outcome != tc.outcome || row.Winner != tc.winner || len(row.Tied) != tc.tied || len(row.Unresolved) != tc.unresolved {
				t.Errorf("%+v", row)
			}
		})
	}
	row := Row{Cells: []Cell{{Scenario: "a"}}}
	pickWinner(&row, []int{0}, get(nil))
	if row.Outcome != "" {
		t.Errorf("one scenario measured: nothing to compare, got %q", row.Outcome)
	}
}

func TestComputeFromDisk(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 8}
	accept := 2.4
	m := verdicttest.Manifest("c", "r", "sha256:ff", "baseline", s, "baseline", "eagle3", "broken")
	m.Rounds = 4
	launches := verdicttest.Campaign([]verdicttest.Engine{verdicttest.Baseline, verdicttest.Eagle3TopK4}, s, m.Rounds, 1)
	rounds := [2][][]measure.Record{make([][]measure.Record, m.Rounds), make([][]measure.Record, m.Rounds)}
	for _, l := range launches {
		rounds[l.Scenario][l.Round-1] = l.Records
	}
	rounds[1][1] = nil // eagle3's second launch failed
	run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
		{Name: "baseline", Rounds: rounds[0]},
		{Name: "eagle3", Rounds: rounds[1], AcceptLength: &accept},
		{Name: "broken", Status: results.StatusFailed, Reason: "unrecognized arguments: --speculative-eagle-top"},
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := judgedDir(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Rounds != 4 || len(v.Scenario("eagle3").Level(measure.ConcurrencyLevel(1)).Launches) != 3 {
		t.Errorf("rounds %d, eagle3 launches at C=1 %d; want 4 and 3 (one failed)", v.Rounds, len(v.Scenario("eagle3").Level(measure.ConcurrencyLevel(1)).Launches))
	}
	if c := v.Cell(measure.ConcurrencyLevel(1), "eagle3"); c.Method != MethodLaunches || c.Rounds != 3 {
		t.Errorf("eagle3 at C=1: method %q over %d rounds, want launches over the 3 paired rounds", c.Method, c.Rounds)
	}
	red := false
	for _, n := range v.Notes {
		red = red || (n.Severity == SeverityRed && strings.Contains(n.Text, "eagle3 round 2 failed"))
	}
	if !red {
		t.Errorf("no red note for eagle3's failed launch: %+v", v.Notes)
	}
	if got := len(v.Scenarios); got != 3 {
		t.Fatalf("%d scenarios, want 3 (the failed one listed)", got)
	}
	if !v.Scenario("broken").Failed() || len(v.Scenario("broken").Levels) != 0 {
		t.Errorf("failed scenario has measurements")
	}
	if v.Rows[0].Winner != "eagle3" || v.Rows[1].Winner != "baseline" {
		t.Errorf("winners %q, %q; want eagle3 at C=1 and baseline at C=8", v.Rows[0].Winner, v.Rows[1].Winner)
	}
	if a := v.Scenario("eagle3").AcceptLength; a == nil || *a != 2.4 {
		t.Errorf("accept length %v", a)
	}
	if _, err := judgedDir(run, Options{Baseline: "nope"}); err == nil {
		t.Error("an unknown baseline override was accepted")
	}
	// The override swaps the roles: eagle3 is now the baseline.
	v2, err := judgedDir(run, Options{Baseline: "eagle3"})
	if err != nil {
		t.Fatal(err)
	}
	if c := v2.Cell(measure.ConcurrencyLevel(1), "baseline"); c == nil || !c.Compared || c.DeltaPct >= 0 {
		t.Errorf("with eagle3 as baseline, baseline at C=1 should be compared and slower: %+v", c)
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                               "",
		"server exited":                  "server exited",
		"server exited\nINFO: 503\nmore": "server exited …",
		"  padded \n":                    "padded",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
