package verdict

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
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
		{"counts disagree, counter unchecked", measure.LevelSummary{Level: c, Throughput: 100,
			Server: &measure.ServerSummary{GenTokS: &measure.ServerFigure{Value: 83, Unchecked: "counted when a request ends"}}}, ""},
		// The cache is a doubt of a pair (TestPairCacheDoubts): one side's
		// cache left warm doubts nothing by itself.
		{"cache not cleared, prompts repeat", measure.LevelSummary{Level: c, CacheResetNote: "status 400"}, ""},
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

// TestPairCacheDoubts: the prefix cache doubts a comparison only on
// evidence that it treated the two sides differently: cleared on one side
// and not on the other (lasting when the warm side's reset never worked),
// or warm on both with shares of cached prompt tokens apart by more than
// DefaultCacheShareGap. Warm on both alike, or cleared on both, it doubts
// nothing.
func TestPairCacheDoubts(t *testing.T) {
	c := measure.ConcurrencyLevel(1)
	warm := measure.LevelSummary{Level: c, CacheResetNote: "no prefix-cache reset: engine generic has no known reset"}
	cleared := measure.LevelSummary{Level: c, CacheReset: "POST /flush_cache"}
	none := measure.LevelSummary{Level: c, NoPrefixCache: true}
	unique := measure.LevelSummary{Level: c, CacheResetNote: "status 400", UniquePrompts: true}
	// side is a scenario of launches at level c, each with its summary and
	// one request whose cached share of 100 prompt tokens is cached.
	side := func(name string, cached int, sums ...measure.LevelSummary) *Scenario {
		var ls []records.Launch
		for i, sum := range sums {
			rec := measure.Record{Level: c, PromptTokens: 100, CachedTokens: new(cached)}
			ls = append(ls, records.Launch{Round: i + 1, Records: []measure.Record{rec},
				Result: &results.ScenarioResult{Levels: []measure.LevelSummary{sum}}})
		}
		return &Scenario{Name: name, Levels: []Level{{Level: c, launchFacts: levelFacts(ls, c)}}}
	}
	for _, tc := range []struct {
		name      string
		a, b      *Scenario
		doubted   string // the scenario the doubt names; "": none
		lasting   bool
		wantWords string
	}{
		{"warm on both alike", side("base", 40, warm, warm), side("spec", 40, warm, warm), "", false, ""},
		{"warm on both, shares within the gap", side("base", 40, warm, warm), side("spec", 44, warm, warm), "", false, ""},
		{"cleared on both, shares apart", side("base", 0, cleared, cleared), side("spec", 30, cleared, cleared), "", false, ""},
		{"unique prompts on one side", side("base", 0, unique), side("spec", 0, cleared), "", false, ""},
		{"cleared on one side only", side("base", 0, cleared, cleared), side("spec", 40, warm, warm), "spec", true,
			"cleared before the level for base but not for spec, and the prompts repeat: no prefix-cache reset: engine generic has no known reset"},
		{"none on one side, warm on the other", side("base", 40, warm), side("spec", 0, none), "base", true, "for spec but not for base"},
		{"a reset that worked once", side("base", 0, cleared, cleared), side("spec", 40, cleared, warm), "spec", false, "not for spec"},
		{"warm on both, shares apart", side("base", 10, warm, warm), side("spec", 40, warm, warm), "base", false,
			"served 10.0% of base's prompt tokens against 40.0% of spec's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := pairCacheDoubts(tc.a, tc.b, c, func(int) bool { return true })
			if tc.doubted == "" {
				if len(ds) > 0 {
					t.Fatalf("doubts %+v, want none", ds)
				}
				return
			}
			if len(ds) != 1 || ds[0].Kind != DoubtCache || ds[0].Scenario != tc.doubted || ds[0].Lasting != tc.lasting ||
				!strings.Contains(ds[0].Text, tc.wantWords) {
				t.Fatalf("doubts %+v, want one cache doubt of %s (lasting %v) saying %q", ds, tc.doubted, tc.lasting, tc.wantWords)
			}
			if Lasting(ds) != tc.lasting {
				t.Errorf("Lasting %v, want %v", Lasting(ds), tc.lasting)
			}
		})
	}
}

// cacheCampaign is a sequential campaign of baseline and a variant 30%
// faster, levels 1 and 16, whose prefix cache at C=1 is cleared on the
// baseline's side in every launch and left warm on the variant's: in every
// launch when lasting, else cleared in its first launch.
func cacheCampaign(t *testing.T, rounds int, lasting bool, levels ...int) records.Input {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 16}
	fast := verdicttest.Baseline
	fast.StepBase /= 1.3
	fast.StepPerSeq /= 1.3
	names := []string{"baseline", "fast"}
	in := verdicttest.CampaignInput(names, s, rounds, verdicttest.Campaign([]verdicttest.Engine{verdicttest.Baseline, fast}, s, rounds, 3))
	for name, ls := range in.Launches {
		for i := range ls {
			var sums []measure.LevelSummary
			for _, c := range s.Concurrency {
				sum := measure.LevelSummary{Level: measure.ConcurrencyLevel(c), CacheReset: "POST /flush_cache"}
				if name == "fast" && slices.Contains(levels, c) && (lasting || ls[i].Round > 1) {
					sum = measure.LevelSummary{Level: sum.Level, CacheResetNote: "no prefix-cache reset: POST /slots/0?action=erase: status 501"}
				}
				sums = append(sums, sum)
			}
			ls[i].Result = &results.ScenarioResult{Levels: sums}
		}
	}
	return in
}

// TestLastingDoubtStopsAtTheFirstLook: a comparison doubted for a reason
// no later round can clear (the variant's cache reset never worked while
// the baseline's did) closes at its first look, and once its other
// comparisons are decided its variant stops there instead of launching to
// the maximum; the stop's reason says why and what would clear it. The
// same doubt from a reset that worked once keeps the variant launching.
func TestLastingDoubtStopsAtTheFirstLook(t *testing.T) {
	plan := &SequentialPlan{MinRounds: 3, MaxRounds: 8}
	c1 := measure.ConcurrencyLevel(1)
	v, err := Judged(cacheCampaign(t, 3, true, 1), Options{Sequential: plan})
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Cell(c1, "fast"); c.Outcome != OutcomeDoubted || c.Open || !Lasting(c.Doubts) {
		t.Fatalf("fast at C=1 after round 3: %q, open %v, doubts %+v; want doubted, closed, lasting", c.Outcome, c.Open, c.Doubts)
	}
	if c := v.Cell(measure.ConcurrencyLevel(16), "fast"); c.Outcome != OutcomeFaster {
		t.Fatalf("fast at C=16 after round 3: %q, want faster: the test shows nothing", c.Outcome)
	}
	vs := v.Sequential.Variants[0]
	want := "stopped after 3 rounds: doubted at 1 of 2 comparisons for a reason no more rounds can clear: the prefix cache was cleared before the level for baseline but not for fast"
	if !vs.Stopped || vs.StoppedAfter != 3 || !strings.HasPrefix(vs.Reason, want) || !strings.Contains(vs.Reason, "to clear it, clear both sides' prefix cache the same way") {
		t.Errorf("fast: %+v\nwant stopped after 3: %q…", vs, want)
	}
	if open := Open(v); len(open) != 0 {
		t.Errorf("open after round 3: %v, want none", open)
	}
	if cost := Cost(v, nil); cost.Doubted != 1 || cost.Open != 0 || !strings.Contains(cost.Sentence, "; 1 doubted") {
		t.Errorf("cost %+v: want 1 doubted, none open", cost)
	}

	v, err = Judged(cacheCampaign(t, 3, false, 1), Options{Sequential: plan})
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Cell(c1, "fast"); c.Outcome != OutcomeDoubted || !c.Open {
		t.Errorf("a reset that worked once: fast at C=1 %q, open %v; want doubted and open", c.Outcome, c.Open)
	}
	if open := Open(v); !slices.Equal(open, []string{"fast"}) {
		t.Errorf("a reset that worked once: open %v, want fast", open)
	}
}

// TestDoubtedSentence: a variant doubted at every level says so, with the
// reason and what would clear it, never "no difference could be detected";
// one doubted at some levels names them among its stretches. Golden.
func TestDoubtedSentence(t *testing.T) {
	plan := &SequentialPlan{MinRounds: 3, MaxRounds: 8}
	var out strings.Builder
	for _, levels := range [][]int{{1, 16}, {1}} {
		v, err := Judged(cacheCampaign(t, 3, true, levels...), Options{Sequential: plan})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range v.Crossovers {
			out.WriteString(x.Sentence + "\n")
			if strings.Contains(x.Sentence, "could be detected") || strings.Contains(x.Sentence, "inconclusive") {
				t.Errorf("the sentence reads as inconclusive for a doubted stretch: %s", x.Sentence)
			}
		}
		out.WriteString(Cost(v, nil).Sentence + "\n")
	}
	golden.Check(t, filepath.Join("testdata", "doubted-sentence.golden"), []byte(out.String()))
}

// TestLastingAmongOthers: a comparison with one doubt no round can clear is
// never decided, whatever its other doubts: a busy host's beside a cache
// reset that never worked must not keep its variant launching to the
// maximum (a loaded machine raised both in the same run).
func TestLastingAmongOthers(t *testing.T) {
	for _, tc := range []struct {
		ds   []Doubt
		want bool
	}{
		{nil, false},
		{[]Doubt{{Kind: DoubtCache}}, false},
		{[]Doubt{{Kind: DoubtCache, Lasting: true}}, true},
		{[]Doubt{{Kind: DoubtHost}, {Kind: DoubtCache, Lasting: true}}, true},
	} {
		if got := Lasting(tc.ds); got != tc.want {
			t.Errorf("Lasting(%+v) = %v, want %v", tc.ds, got, tc.want)
		}
	}
}
