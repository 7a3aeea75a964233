package notes

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// outputs is one launch's greedy outputs: prompts 0..n-1, each answered
// `sends` times with its usual text, except the prompts in other, answered
// with another text (on every send, or with sends > 1 on the last only).
type outputs struct {
	n, sends int
	other    []int
}

// records makes the launch's records; tag makes another text differ from
// another scenario's.
func (o outputs) records(tag string) []measure.Record {
	var recs []measure.Record
	for p := range o.n {
		for s := range max(o.sends, 1) {
			h := fmt.Sprintf("sha256:usual-%d", p)
			if slices.Contains(o.other, p) && (o.sends <= 1 || s == o.sends-1) {
				h = fmt.Sprintf("sha256:%s-other-%d", tag, p)
			}
			recs = append(recs, measure.Record{Level: measure.ConcurrencyLevel(1), Seq: len(recs), Prompt: p, Tokens: 200, OutputHash: h})
		}
	}
	return recs
}

// span is the prompts from..to-1.
func span(from, to int) []int {
	var out []int
	for p := from; p < to; p++ {
		out = append(out, p)
	}
	return out
}

// greedyInput is a run of a baseline and one variant with these launches.
func greedyInput(base, variant []outputs) (*verdict.Verdict, records.Input) {
	in := records.Input{Launches: map[string][]records.Launch{}}
	for name, ls := range map[string][]outputs{"baseline": base, "variant": variant} {
		for i, o := range ls {
			in.Launches[name] = append(in.Launches[name], records.Launch{Round: i + 1, Records: o.records(name)})
		}
	}
	v := &verdict.Verdict{Baseline: "baseline", Scenarios: []verdict.Scenario{{Name: "baseline"}, {Name: "variant"}}}
	return v, in
}

// TestGreedyAgainstTheBaselinesOwnDifferences: a variant's outputs are
// called a likely bug only when they differ from the baseline's clearly
// more often than the baseline's differ from each other. The first cases
// are the numbers a real llama-server gave (a random draft model, and an
// A/A pair), where the flips were near-ties of the top two tokens.
func TestGreedyAgainstTheBaselinesOwnDifferences(t *testing.T) {
	n34 := outputs{n: 34}
	for _, tt := range []struct {
		name          string
		base, variant []outputs
		severity      string
		texts         []string
	}{
		{"random draft: 6 of 34 against the baseline's 7 between its launches",
			[]outputs{{n: 42}, {n: 42, other: span(0, 7)}},
			[]outputs{{n: 34, other: span(10, 16)}},
			verdict.SeverityWarn, []string{"outputs differ on 6 of 34 prompts (first: prompt 10)",
				"the baseline differs from itself on 7 of 34 over its 2 launches", "greedy decoding is not deterministic here"}},
		{"random draft: 6 of 34 against the A/A pair's 2",
			[]outputs{{n: 34}, {n: 34, other: []int{0, 1}}},
			[]outputs{{n: 34, other: span(10, 16)}},
			verdict.SeverityWarn, []string{"outputs differ on 6 of 34 prompts", "the baseline differs from itself on 2 of 34",
				"greedy decoding is not deterministic here", "not clearly larger (one-sided Fisher p=0.129;"}},
		{"A/A pair: 2 of 26 both ways",
			[]outputs{{n: 26}, {n: 26, other: []int{3, 4}}},
			[]outputs{{n: 26}, {n: 26, other: []int{7, 8}}},
			verdict.SeverityWarn, []string{"outputs differ on 2 of 26 prompts", "the baseline differs from itself on 2 of 26",
				"greedy decoding is not deterministic here"}},
		{"broken: 30 of 34 against none",
			[]outputs{n34, n34, n34},
			[]outputs{{n: 34, other: span(0, 30)}, {n: 34, other: span(0, 30)}, {n: 34, other: span(0, 30)}},
			verdict.SeverityRed, []string{"outputs differ on 30 of 34 prompts", "the baseline differs from itself on 0 of 34 over its 3 launches",
				"p<0.001", "likely a speculative decoding bug"}},
		{"broken, and the baseline varies too: 34 of 34 against 7",
			[]outputs{{n: 34}, {n: 34, other: span(0, 7)}},
			[]outputs{{n: 34, other: span(0, 34)}},
			verdict.SeverityRed, []string{"outputs differ on 34 of 34 prompts", "the baseline differs from itself on 7 of 34", "likely a speculative decoding bug"}},
		{"a deterministic baseline, a few flips: not clearly more",
			[]outputs{n34, n34, n34, n34, n34, n34},
			[]outputs{{n: 34, other: []int{5, 9, 20}}},
			verdict.SeverityWarn, []string{"outputs differ on 3 of 34 prompts", "the baseline differs from itself on 0 of 34 over its 6 launches",
				"not clearly more than the baseline's own (one-sided Fisher p=0.119"}},
		{"significant but not material: 15% against 10% of 1000 prompts",
			[]outputs{{n: 1000}, {n: 1000, other: span(0, 100)}},
			[]outputs{{n: 1000, other: span(500, 650)}},
			verdict.SeverityWarn, []string{"outputs differ on 150 of 1000 prompts", "the baseline differs from itself on 100 of 1000",
				"p<0.001; a bug is called at p<0.01 and 25 points above"}},
		{"one baseline launch, a few flips: no bug, and it says why",
			[]outputs{n34}, []outputs{{n: 34, other: span(10, 16)}},
			verdict.SeverityWarn, []string{"outputs differ on 6 of 34 prompts",
				"the baseline ran once, so how often its outputs differ between launches is not measured (within its launch: 0 of 34)",
				"more rounds would measure the baseline against itself"}},
		{"one baseline launch that varies within itself",
			[]outputs{{n: 34, sends: 2, other: span(0, 7)}}, []outputs{{n: 34, other: span(10, 16)}},
			verdict.SeverityWarn, []string{"outputs differ on 6 of 34 prompts", "(within its launch: 7 of 34)", "greedy decoding is not deterministic here"}},
		{"one baseline launch, a large difference: a bug even so",
			[]outputs{n34}, []outputs{{n: 34, other: span(0, 30)}},
			verdict.SeverityRed, []string{"outputs differ on 30 of 34 prompts", "the baseline ran once",
				"at least 50 points above", "likely a speculative decoding bug"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, in := greedyInput(tt.base, tt.variant)
			var note *verdict.Note
			for _, n := range checkGreedy(v, in) {
				if n.Scenario == "variant" {
					note = &n
				}
			}
			if note == nil {
				t.Fatal("no greedy note for the variant")
			}
			if note.Severity != tt.severity {
				t.Errorf("severity %s, want %s: %s", note.Severity, tt.severity, note.Text)
			}
			for _, want := range tt.texts {
				if !strings.Contains(note.Text, want) {
					t.Errorf("note does not say %q:\n%s", want, note.Text)
				}
			}
		})
	}
}

// TestFisherGreater checks the one-sided exact p against the
// hypergeometric tail computed in exact rational arithmetic, on the tables
// the greedy check meets and on the textbook one (a lady tasting tea: 3 of
// 4 against 1 of 4, p = 17/70).
func TestFisherGreater(t *testing.T) {
	exact := func(a, n1, c, n2 int) float64 {
		d := a + c
		sum := new(big.Int)
		for x := a; x <= min(n1, d); x++ {
			if d-x > n2 {
				continue
			}
			term := new(big.Int).Binomial(int64(n1), int64(x))
			sum.Add(sum, term.Mul(term, new(big.Int).Binomial(int64(n2), int64(d-x))))
		}
		p, _ := new(big.Rat).SetFrac(sum, new(big.Int).Binomial(int64(n1+n2), int64(d))).Float64()
		return p
	}
	for _, tc := range [][4]int{
		{3, 4, 1, 4}, {6, 34, 7, 34}, {6, 34, 2, 34}, {30, 34, 0, 34}, {7, 34, 0, 34}, {3, 34, 0, 34},
		{150, 1000, 100, 1000}, {0, 34, 5, 34}, {34, 34, 34, 34}, {5, 10, 0, 3},
	} {
		got, want := rule.FisherGreater(tc[0], tc[1], tc[2], tc[3]), exact(tc[0], tc[1], tc[2], tc[3])
		if math.Abs(got-want) > 1e-9*max(want, 1e-300) && math.Abs(got-want) > 1e-15 {
			t.Errorf("rule.FisherGreater%v = %.12g, want %.12g", tc, got, want)
		}
	}
	if p := rule.FisherGreater(3, 4, 1, 4); math.Abs(p-17.0/70) > 1e-12 {
		t.Errorf("tea tasting: p = %v, want 17/70", p)
	}
}
