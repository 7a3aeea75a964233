package verdict

import (
	"strings"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

func cellsOf(deltas []float64, sig []bool) []Cell {
	out := make([]Cell, len(deltas))
	for i := range deltas {
		out[i] = Cell{Compared: true, DeltaPct: deltas[i], Significant: sig[i], P: 0.0004}
	}
	return out
}

func TestCrossoverSentences(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels []int
		deltas []float64
		sig    []bool
		want   string
		stops  *Bracket
		starts *Bracket
	}{
		{"the seeds' story", []int{1, 2, 5, 250}, []float64{3.8, 1, -20, -54}, []bool{true, false, true, true},
			"x: +3.8% at C=1 (p<0.001); ~ at C=2; loses from C=5 on, down to −54.0% at C=250",
			&Bracket{1, 2}, &Bracket{2, 5}},
		{"wins everywhere", []int{1, 2}, []float64{3, 7}, []bool{true, true},
			"x: wins at every level (C=1 to C=2), up to +7.0% at C=2 (p<0.001)", nil, nil},
		{"loses everywhere", []int{1, 2}, []float64{-3, -1}, []bool{true, true},
			"x: loses at every level (C=1 to C=2), down to −3.0% at C=1 (p<0.001)", nil, nil},
		{"no difference", []int{1, 2, 5}, []float64{0.1, -0.2, 1}, []bool{false, false, false},
			"x: no significant difference at any level (C=1 to C=5)", nil, nil},
		{"wins then ties", []int{1, 2, 5, 10}, []float64{4, 5, 0, 1}, []bool{true, true, false, false},
			"x: wins from C=1 to C=2, up to +5.0% at C=2; ~ from C=5 on", &Bracket{2, 5}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := crossoverOf("x", tc.levels, cellsOf(tc.deltas, tc.sig))
			if x.Sentence != tc.want {
				t.Errorf("sentence\n got %s\nwant %s", x.Sentence, tc.want)
			}
			if !eqBracket(x.StopsWinning, tc.stops) || !eqBracket(x.StartsLosing, tc.starts) {
				t.Errorf("brackets stops=%v starts=%v, want %v %v", x.StopsWinning, x.StartsLosing, tc.stops, tc.starts)
			}
		})
	}
}

func eqBracket(a, b *Bracket) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func TestWinner(t *testing.T) {
	lv := func(xs ...float64) *Level {
		l := &Level{Samples: xs}
		var s float64
		for _, x := range xs {
			s += x
		}
		l.Throughput.Center = s / float64(len(xs))
		return l
	}
	fast := lv(110, 111, 109, 110.5, 109.5)
	base := lv(100, 101, 99, 100.5, 99.5)
	same := lv(100.2, 100.9, 99.1, 100.4, 99.6)
	for _, tc := range []struct {
		name   string
		levels []*Level
		winner string
		tied   int
	}{
		{"clear winner", []*Level{base, fast}, "b", 0},
		{"tie", []*Level{base, same}, "", 2},
		{"one measured: nothing to compare", []*Level{base, nil}, "", 0},
		{"two ahead tie", []*Level{base, fast, fast}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := Row{}
			for i := range tc.levels {
				row.Cells = append(row.Cells, Cell{Scenario: string(rune('a' + i))})
			}
			pickWinner(&row, tc.levels, &benchmath.Thresholds{CompareAlpha: DefaultAlpha})
			if row.Winner != tc.winner || len(row.Tied) != tc.tied {
				t.Errorf("winner %q tied %v, want %q and %d tied", row.Winner, row.Tied, tc.winner, tc.tied)
			}
		})
	}
}

// fairInput is a small two-scenario campaign whose variant can be broken.
func fairInput(t *testing.T, breakVariant func([]measure.Record) []measure.Record) Input {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 4}
	in := pairInput(verdicttest.Simulate(verdicttest.Baseline, s, 1),
		breakVariant(verdicttest.Simulate(verdicttest.Baseline, s, 2)), s)
	in.Manifest.Fingerprint = "sha256:ff"
	in.Summary.Scenarios = []results.ScenarioResult{
		{Name: "baseline", Status: results.StatusOK, Fingerprint: "sha256:ff"},
		{Name: "variant", Status: results.StatusOK, Fingerprint: "sha256:ff"}}
	return in
}

func TestFairness(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(*Input)
		check    string
		severity string
		text     string
	}{
		{"all good: greedy passes, said so", func(*Input) {}, CheckGreedy, SeverityInfo, "equal the baseline's"},
		{"greedy output differs: a red line", func(in *Input) {
			for i := range in.Records["variant"] {
				if in.Records["variant"][i].Prompt == 3 {
					in.Records["variant"][i].OutputHash = "changed"
				}
			}
		}, CheckGreedy, SeverityRed, "differs from the baseline's for 1 of"},
		{"failed requests are shown", func(in *Input) {
			r := &in.Records["variant"][10]
			r.ErrClass, r.Error, r.Tokens = measure.ErrTimeout, "deadline", 0
		}, CheckRequests, SeverityWarn, "1 of 30 requests failed (timeout 1)"},
		{"short outputs under ignore_eos", func(in *Input) {
			in.Records["variant"][12].Tokens = 17
		}, CheckTokens, SeverityWarn, "did not produce exactly max_tokens=200"},
		{"fingerprint differs", func(in *Input) {
			in.Summary.Scenarios[1].Fingerprint = "sha256:other"
		}, CheckFingerprint, SeverityRed, "not comparable"},
		{"prompt set differs", func(in *Input) {
			for i := range in.Records["variant"] {
				in.Records["variant"][i].PromptSet = "sha256:elsewhere"
			}
		}, CheckFingerprint, SeverityRed, "sent prompt set"},
		{"failed scenario is listed", func(in *Input) {
			in.Summary.Scenarios[1].Status, in.Summary.Scenarios[1].Reason = results.StatusFailed, "NCCL error"
			delete(in.Records, "variant")
		}, CheckScenario, SeverityRed, "variant failed: NCCL error"},
		{"concurrency not reached", func(in *Input) {
			// Stretch every send to its end's eve: requests barely overlap.
			for i := range in.Records["variant"] {
				r := &in.Records["variant"][i]
				if r.Level == 4 && !r.Warmup {
					d := r.EndNs - r.SendNs
					r.SendNs += d * 3 / 4
				}
			}
		}, CheckConcurrency, SeverityWarn, "requests in flight on average"},
		{"temperature above 0: outputs not compared", func(in *Input) {
			in.Manifest.Sweep.Temperature = 0.7
		}, CheckGreedy, SeverityInfo, "not compared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fairInput(t, func(r []measure.Record) []measure.Record { return r })
			tc.mutate(&in)
			v, err := FromRecords(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range v.Notes {
				if n.Check == tc.check && n.Severity == tc.severity && strings.Contains(n.Text, tc.text) {
					return
				}
			}
			t.Errorf("no %s %s note containing %q; notes:", tc.severity, tc.check, tc.text)
			for _, n := range v.Notes {
				t.Logf("  %s %s: %s", n.Severity, n.Check, n.Text)
			}
		})
	}
}

func TestComputeFromDisk(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 8}
	accept := 2.4
	m := verdicttest.Manifest("c", "r", "sha256:ff", "baseline", s, "baseline", "eagle3", "broken")
	run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
		{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, s, 1)},
		{Name: "eagle3", Records: verdicttest.Simulate(verdicttest.Eagle3TopK4, s, 2), AcceptLength: &accept},
		{Name: "broken", Status: results.StatusFailed, Reason: "unrecognized arguments: --speculative-eagle-top"},
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Compute(run, Options{})
	if err != nil {
		t.Fatal(err)
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
	if _, err := Compute(run, Options{Baseline: "nope"}); err == nil {
		t.Error("an unknown baseline override was accepted")
	}
	// The override swaps the roles: eagle3 is now the baseline.
	v2, err := Compute(run, Options{Baseline: "eagle3"})
	if err != nil {
		t.Fatal(err)
	}
	if c := v2.Cell(1, "baseline"); c == nil || !c.Compared || c.DeltaPct >= 0 {
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
