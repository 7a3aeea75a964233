package verdict

import (
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// doubtCampaign is four rounds of three scenarios, a 10% faster variant and
// an exact twin of the baseline, levels 1, 4 and 16: every comparison is
// decidable, so what the doubts change is theirs alone.
func doubtCampaign(t *testing.T) records.Input {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 4, 16}
	fast := verdicttest.Baseline
	fast.StepBase /= 1.1
	fast.StepPerSeq /= 1.1
	names := []string{"baseline", "fast", "twin"}
	ls := verdicttest.Campaign([]verdicttest.Engine{verdicttest.Baseline, fast, verdicttest.Baseline}, s, 4, 7)
	return verdicttest.CampaignInput(names, s, 4, ls)
}

// pace makes the client of scenario name hold every freed slot at level c
// empty for a tenth of each request's latency: a paced measurement.
func pace(in records.Input, name string, c int) {
	for _, l := range in.Launches[name] {
		for i := range l.Records {
			r := &l.Records[i]
			if r.Level == measure.ConcurrencyLevel(c) && !r.Warmup {
				r.DispatchLagNs = (r.EndNs - r.SendNs) / 10
			}
		}
	}
}

// TestDoubtedLevelNotDecided: a level whose measurement bakeoff doubts is
// not decided, on either path (fixed rounds and sequential looks): its
// comparisons leave the family and the row's winner, the cell carries the
// reason, and the notes say what to do. The other levels are decided as
// without it.
func TestDoubtedLevelNotDecided(t *testing.T) {
	for _, seq := range []bool{false, true} {
		name := "fixed"
		if seq {
			name = "sequential"
		}
		t.Run(name, func(t *testing.T) {
			o := Options{}
			if seq {
				o.Sequential = &SequentialPlan{MinRounds: 2, MaxRounds: 4}
			}
			clean, err := Judged(doubtCampaign(t), o)
			if err != nil {
				t.Fatal(err)
			}
			in := doubtCampaign(t)
			pace(in, "fast", 16)
			v, err := Judged(in, o)
			if err != nil {
				t.Fatal(err)
			}
			c16 := measure.ConcurrencyLevel(16)
			fast := v.Cell(c16, "fast")
			if fast.Outcome != OutcomeDoubted || len(fast.Doubts) != 1 || fast.Doubts[0].Kind != DoubtPace ||
				!strings.Contains(fast.Doubts[0].Text, "held freed slots empty 9.1% of the time") {
				t.Errorf("fast at C=16: outcome %q, doubts %+v; want doubted for pacing, 9.1%%", fast.Outcome, fast.Doubts)
			}
			if fast.OutcomeLo != 0 || fast.PAdjusted != 0 {
				t.Errorf("a doubted cell carries a decided interval [%v, %v] or p %v", fast.OutcomeLo, fast.OutcomeHi, fast.PAdjusted)
			}
			if cf := clean.Cell(c16, "fast"); cf.Outcome != OutcomeFaster {
				t.Fatalf("without the doubt fast is %q at C=16, want faster: the test shows nothing", cf.Outcome)
			}
			// Leaves the family of the fixed design: fast against the
			// baseline and against the twin at C=16. The sequential family
			// keeps them, never looked at while doubted: whether a look
			// doubts a comparison depends on the launches it saw, and a
			// replay must test the others at the level the run did.
			want := clean.Comparisons - 2
			if seq {
				want = clean.Comparisons
			}
			if got := v.Comparisons; got != want {
				t.Errorf("family of %d, want %d (two comparisons doubted out of %d)", got, want, clean.Comparisons)
			}
			// Leaves the winner column: decided among the baseline and the
			// twin, which tie or cannot be told apart, never "fast".
			var row Row
			for _, r := range v.Rows {
				if r.Level == c16 {
					row = r
				}
			}
			if !slices.Equal(row.Doubted, []string{"fast"}) || row.Winner == "fast" {
				t.Errorf("row C=16: winner %q, doubted %v; want fast doubted, not the winner", row.Winner, row.Doubted)
			}
			// The other levels are decided as they were.
			for _, c := range verdicttest.Concurrencies(1, 4) {
				if got, want := v.Cell(c, "fast").Outcome, clean.Cell(c, "fast").Outcome; got != want {
					t.Errorf("fast at %s: %q, want %q as without the doubt", measure.LevelName(c), got, want)
				}
			}
			found := false
			for _, n := range v.Notes {
				if n.Check == CheckClient && n.Scenario == "fast" && n.Level == c16 && strings.Contains(n.Text, "not decided: ") {
					found = true
				}
			}
			if !found {
				t.Errorf("no note says fast at C=16 was not decided and what to do; notes: %v", v.Notes)
			}
		})
	}
}

// TestDoubtKinds: each kind of doubt from what the launches' level
// summaries say.
func TestDoubtKinds(t *testing.T) {
	c := measure.ConcurrencyLevel(8)
	for _, tc := range []struct {
		name  string
		level measure.LevelSummary
		want  string
	}{
		{"counts agree", measure.LevelSummary{Level: c, Throughput: 100,
			Server: &measure.ServerSummary{GenTokS: &measure.ServerFigure{Value: 103}}}, ""},
		{"counts disagree", measure.LevelSummary{Level: c, Throughput: 100,
			Server: &measure.ServerSummary{GenTokS: &measure.ServerFigure{Value: 112}}}, DoubtCounts},
		{"cache not cleared, prompts repeat", measure.LevelSummary{Level: c, CacheResetNote: "status 400"}, DoubtCache},
		{"cache not cleared, prompts unique", measure.LevelSummary{Level: c, CacheResetNote: "status 400", UniquePrompts: true}, ""},
		{"cache cleared", measure.LevelSummary{Level: c, CacheReset: "POST /flush_cache"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := []records.Launch{{Round: 1, Result: &results.ScenarioResult{Levels: []measure.LevelSummary{tc.level}}}}
			ds := levelDoubts("a", &Level{Level: c, launchFacts: levelFacts(ls, c)})
			if got := strings.Join(DoubtKinds(ds), ","); got != tc.want {
				t.Errorf("doubts %+v, want kinds %q", ds, tc.want)
			}
		})
	}
}

// TestDoubtReplaysTheRunsLooks: a level that only a late launch makes
// doubted is decided by the replayed looks as the run's own look decided it
// before that launch: each look doubts what the launches it saw doubt, so
// the report, replaying every look at the end, names the outcome and the
// round the live look did, and the variant's stop stands. Doubting the level
// at every look from the end's pooled figure (as the rule did before) turns
// the decision the run acted on into a doubted cell.
func TestDoubtReplaysTheRunsLooks(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 4, 16}
	fast := verdicttest.Baseline
	fast.StepBase /= 1.1
	fast.StepPerSeq /= 1.1
	names := []string{"baseline", "fast"}
	const rounds = 6
	ls := verdicttest.Campaign([]verdicttest.Engine{verdicttest.Baseline, fast}, s, rounds, 11)
	plan := &SequentialPlan{MinRounds: 3, MaxRounds: rounds}
	c16 := measure.ConcurrencyLevel(16)

	// The live look after round 5, on the launches it had.
	var early []verdicttest.Launch
	for _, l := range ls {
		if l.Round < rounds {
			early = append(early, l)
		}
	}
	live, err := Judged(verdicttest.CampaignInput(names, s, rounds, early), Options{Sequential: plan})
	if err != nil {
		t.Fatal(err)
	}
	lc := live.Cell(c16, "fast")
	if lc.Outcome != OutcomeFaster || lc.DecidedAtRound == 0 {
		t.Fatalf("the live look: fast at C=16 %q (decided after %d), want faster: the test shows nothing", lc.Outcome, lc.DecidedAtRound)
	}

	// Round 6's launch of fast paces its client a half of each latency at
	// C=16: over every launch pooled the level is doubted.
	in := verdicttest.CampaignInput(names, s, rounds, ls)
	for _, l := range in.Launches["fast"] {
		if l.Round != rounds {
			continue
		}
		for i := range l.Records {
			r := &l.Records[i]
			if r.Level == c16 && !r.Warmup {
				r.DispatchLagNs = (r.EndNs - r.SendNs) / 2
			}
		}
	}
	v, err := Judged(in, Options{Sequential: plan})
	if err != nil {
		t.Fatal(err)
	}
	if l := v.Scenario("fast").Level(c16); len(l.Doubts) == 0 {
		t.Fatalf("fast at C=16 over every launch: no doubt (pace share %.3f): the test shows nothing", l.PaceShare)
	}
	vc := v.Cell(c16, "fast")
	if vc.Outcome != lc.Outcome || vc.DecidedAtRound != lc.DecidedAtRound {
		t.Errorf("replayed: fast at C=16 %q after %d rounds; the live look decided %q after %d", vc.Outcome, vc.DecidedAtRound, lc.Outcome, lc.DecidedAtRound)
	}
	for _, c := range []measure.Level{measure.ConcurrencyLevel(1), measure.ConcurrencyLevel(4)} {
		if got, want := v.Cell(c, "fast"), live.Cell(c, "fast"); got.Decided && want.Decided && (got.Outcome != want.Outcome || got.DecidedAtRound != want.DecidedAtRound) {
			t.Errorf("fast at %s: %q after %d, the live look %q after %d", measure.LevelName(c), got.Outcome, got.DecidedAtRound, want.Outcome, want.DecidedAtRound)
		}
	}
}

// TestDoubtedThroughoutAtTheMaximum: a level whose client set the pace in
// every launch is never looked at. Before the maximum it holds its variant
// open and its cell is open (so the planner sizes the next rounds for it,
// with its noise figure); at the maximum the variant stops, and the reason
// says the comparison was doubted, not that the campaign is still open
// after a round it will never follow.
func TestDoubtedThroughoutAtTheMaximum(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 16}
	slow := verdicttest.Baseline
	slow.StepBase *= 1.5
	slow.StepPerSeq *= 1.5
	names := []string{"baseline", "slow"}
	const rounds = 5
	c1 := measure.ConcurrencyLevel(1)
	plan := &SequentialPlan{MinRounds: 3, MaxRounds: rounds}
	ls := verdicttest.Campaign([]verdicttest.Engine{verdicttest.Baseline, slow}, s, rounds, 5)
	verdictAfter := func(n int) *Verdict {
		t.Helper()
		var kept []verdicttest.Launch
		for _, l := range ls {
			if l.Round <= n {
				kept = append(kept, l)
			}
		}
		in := verdicttest.CampaignInput(names, s, n, kept)
		for _, l := range in.Launches["slow"] {
			for i := range l.Records {
				if r := &l.Records[i]; r.Level == c1 && !r.Warmup {
					r.DispatchLagNs = (r.EndNs - r.SendNs) / 4
				}
			}
		}
		v, err := Judged(in, Options{Sequential: plan})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	stopOf := func(v *Verdict) VariantStop {
		for _, vs := range v.Sequential.Variants {
			if vs.Variant == "slow" {
				return vs
			}
		}
		t.Fatal("no stop for slow")
		return VariantStop{}
	}

	v := verdictAfter(rounds - 1)
	c := v.Cell(c1, "slow")
	if c.Outcome != OutcomeDoubted {
		t.Fatalf("slow at C=1: %q, want doubted: the test shows nothing", c.Outcome)
	}
	if !c.Open || c.RoundSDPct <= 0 {
		t.Errorf("slow at C=1 before the maximum: open %v, round sd %.2f%%; want open with a noise figure for the planner", c.Open, c.RoundSDPct)
	}
	vs := stopOf(v)
	if vs.Stopped || vs.Doubted != 1 || !strings.Contains(vs.Reason, "(1 doubted)") {
		t.Errorf("slow before the maximum: %+v, want open with 1 doubted", vs)
	}
	if d := v.Cell(measure.ConcurrencyLevel(16), "slow"); d.Outcome != OutcomeSlower {
		t.Errorf("slow at C=16: %q, want slower", d.Outcome)
	}

	v = verdictAfter(rounds)
	if c := v.Cell(c1, "slow"); c.Outcome != OutcomeDoubted || c.Open {
		t.Errorf("slow at C=1 at the maximum: %q, open %v; want doubted and closed", c.Outcome, c.Open)
	}
	vs = stopOf(v)
	want := "max rounds reached: doubted at 1 of 2 comparisons, never decided"
	if !vs.Stopped || vs.StoppedAfter != rounds || vs.Reason != want {
		t.Errorf("slow at the maximum: %+v, want stopped after %d: %q", vs, rounds, want)
	}
	if open := Open(v); len(open) != 0 {
		t.Errorf("open at the maximum: %v", open)
	}
}
