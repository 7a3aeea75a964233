package verdict

import (
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

func cellsOf(deltas []float64, outcomes string) []Cell {
	out := make([]Cell, len(deltas))
	names := map[byte]string{'+': OutcomeFaster, '-': OutcomeSlower, '=': OutcomeTie, '?': OutcomeInconclusive}
	for i := range deltas {
		out[i] = Cell{Compared: true, Comparison: Comparison{DeltaPct: deltas[i], Outcome: names[outcomes[i]],
			PAdjusted: 0.0004, MDEPct: 3.2}}
	}
	return out
}

func TestCrossoverSentences(t *testing.T) {
	for _, tc := range []struct {
		name     string
		levels   []int
		deltas   []float64
		outcomes string
		want     string
		stops    *Bracket
		starts   *Bracket
	}{
		{"the seeds' story", []int{1, 2, 5, 250}, []float64{3.8, 1, -20, -54}, "+?--",
			"x: +3.8% at C=1 (p<0.001); inconclusive at C=2; loses from C=5 on, down to −54.0% at C=250",
			&Bracket{measure.ConcurrencyLevel(1), measure.ConcurrencyLevel(2)}, &Bracket{measure.ConcurrencyLevel(2), measure.ConcurrencyLevel(5)}},
		{"wins everywhere", []int{1, 2}, []float64{3, 7}, "++",
			"x: wins at every level (C=1 to C=2), up to +7.0% at C=2 (p<0.001)", nil, nil},
		{"loses everywhere", []int{1, 2}, []float64{-3, -1}, "--",
			"x: loses at every level (C=1 to C=2), down to −3.0% at C=1 (p<0.001)", nil, nil},
		{"ties everywhere", []int{1, 2, 5}, []float64{0.1, -0.2, 1}, "===",
			"x: ties at every level (C=1 to C=5)", nil, nil},
		{"cannot tell anywhere", []int{1, 2, 5}, []float64{0.1, -0.2, 1}, "???",
			"x: inconclusive at every level (C=1 to C=5): differences under ±3.2% could not be detected", nil, nil},
		{"wins, ties, then cannot tell", []int{1, 2, 5, 10, 30}, []float64{4, 5, 0, 1, 2}, "++=??",
			"x: wins from C=1 to C=2, up to +5.0% at C=2; tie at C=5; inconclusive from C=10 on", &Bracket{measure.ConcurrencyLevel(2), measure.ConcurrencyLevel(5)}, nil},
		{"tie and can't tell are told apart", []int{1, 2, 5}, []float64{0, 0, -9}, "=?-",
			"x: tie at C=1; inconclusive at C=2; −9.0% at C=5 (p<0.001)", nil, &Bracket{measure.ConcurrencyLevel(2), measure.ConcurrencyLevel(5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := crossoverOf("x", concurrencies(tc.levels...), cellsOf(tc.deltas, tc.outcomes))
			if x.Sentence != tc.want {
				t.Errorf("sentence\n got %s\nwant %s", x.Sentence, tc.want)
			}
			if !eqBracket(x.StopsWinning, tc.stops) || !eqBracket(x.StartsLosing, tc.starts) {
				t.Errorf("brackets stops=%v starts=%v, want %v %v", x.StopsWinning, x.StartsLosing, tc.stops, tc.starts)
			}
		})
	}
}

// concurrencies are the closed-loop levels of cs.
func concurrencies(cs ...int) []measure.Level {
	out := make([]measure.Level, len(cs))
	for i, c := range cs {
		out[i] = measure.ConcurrencyLevel(c)
	}
	return out
}

func eqBracket(a, b *Bracket) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

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

// fairInput is a small two-scenario campaign whose variant can be broken.
func fairInput(t *testing.T, breakVariant func([]measure.Record) []measure.Record) records.Input {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 4}
	in := verdicttest.PairInput(verdicttest.Simulate(verdicttest.Baseline, s, 1),
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
		mutate   func(*records.Input)
		check    string
		severity string
		text     string
	}{
		{"all good: greedy passes, said so", func(*records.Input) {}, CheckGreedy, SeverityInfo, "equal the baseline's"},
		{"one greedy output differs, one launch each: said, not called a bug", func(in *records.Input) {
			for i := range in.Launches["variant"][0].Records {
				if in.Launches["variant"][0].Records[i].Prompt == 3 {
					in.Launches["variant"][0].Records[i].OutputHash = "changed"
				}
			}
		}, CheckGreedy, SeverityWarn, "outputs differ on 1 of"},
		{"every greedy output differs: a red line", func(in *records.Input) {
			for i := range in.Launches["variant"][0].Records {
				in.Launches["variant"][0].Records[i].OutputHash += "changed"
			}
		}, CheckGreedy, SeverityRed, "likely a speculative decoding bug"},
		{"failed requests are shown", func(in *records.Input) {
			r := &in.Launches["variant"][0].Records[10]
			r.ErrClass, r.Error, r.Tokens = measure.ErrTimeout, "deadline", 0
		}, CheckRequests, SeverityWarn, "1 of 30 requests failed (timeout 1)"},
		{"short outputs under ignore_eos", func(in *records.Input) {
			in.Launches["variant"][0].Records[12].Tokens = 17
		}, CheckTokens, SeverityWarn, "did not produce exactly max_tokens=200"},
		{"each request held to its own max_tokens (a trace row's output length)", func(in *records.Input) {
			for _, l := range []records.Launch{in.Launches["baseline"][0], in.Launches["variant"][0]} {
				for i := range l.Records {
					l.Records[i].MaxTokens, l.Records[i].Tokens = 7+i%5, 7+i%5
				}
			}
		}, CheckTokens, SeverityInfo, "every successful request produced the max_tokens each asked for"},
		{"short of its own max_tokens", func(in *records.Input) {
			for i := range in.Launches["variant"][0].Records {
				in.Launches["variant"][0].Records[i].MaxTokens = 300
			}
		}, CheckTokens, SeverityWarn, "did not produce exactly the max_tokens each asked for"},
		{"fingerprint differs", func(in *records.Input) {
			in.Summary.Scenarios[1].Fingerprint = "sha256:other"
		}, CheckFingerprint, SeverityRed, "not comparable"},
		{"prompt set differs", func(in *records.Input) {
			for i := range in.Launches["variant"][0].Records {
				in.Launches["variant"][0].Records[i].PromptSet = "sha256:elsewhere"
			}
		}, CheckFingerprint, SeverityRed, "sent prompt set"},
		{"failed scenario is listed", func(in *records.Input) {
			in.Summary.Scenarios[1].Status, in.Summary.Scenarios[1].Reason = results.StatusFailed, "NCCL error"
			delete(in.Launches, "variant")
		}, CheckScenario, SeverityRed, "variant failed: NCCL error"},
		{"concurrency not reached", func(in *records.Input) {
			// Stretch every send to its end's eve: requests barely overlap.
			for i := range in.Launches["variant"][0].Records {
				r := &in.Launches["variant"][0].Records[i]
				if r.Level == measure.ConcurrencyLevel(4) && !r.Warmup {
					d := r.EndNs - r.SendNs
					r.SendNs += d * 3 / 4
				}
			}
		}, CheckConcurrency, SeverityWarn, "requests in flight on average"},
		{"temperature above 0: outputs not compared", func(in *records.Input) {
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
	v, err := Compute(run, Options{})
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
	if _, err := Compute(run, Options{Baseline: "nope"}); err == nil {
		t.Error("an unknown baseline override was accepted")
	}
	// The override swaps the roles: eagle3 is now the baseline.
	v2, err := Compute(run, Options{Baseline: "eagle3"})
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
