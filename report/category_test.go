package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestCategoriesReported: records that carry prompt categories and
// llama.cpp-style draft counts give per-category figures in the verdict's
// levels, in verdict.json, and in the text and Markdown details.
func TestCategoriesReported(t *testing.T) {
	s := smallSweep()
	s.Concurrency = []int{1, 5}
	launches := verdicttest.Campaign([]verdicttest.Engine{verdicttest.Baseline, verdicttest.Eagle3TopK4}, s, 2, 9)
	per := [2][][]measure.Record{make([][]measure.Record, 2), make([][]measure.Record, 2)}
	for _, l := range launches {
		recs := make([]measure.Record, len(l.Records))
		for i, r := range l.Records {
			r.Category = []string{"chat", "code"}[r.Prompt%2]
			if l.Scenario == 1 && r.Category == "code" {
				r.DraftTokens, r.DraftAccepted = new(r.Tokens), new(r.Tokens/2) // accept length 2
			}
			recs[i] = r
		}
		per[l.Scenario][l.Round-1] = recs
	}
	m := verdicttest.Manifest("cats", "20260101T000000Z", "sha256:cats", "base", s, "base", "spec")
	m.Rounds = 2
	run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
		{Name: "base", Rounds: per[0][:]}, {Name: "spec", Rounds: per[1][:]}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := v.Scenario("spec").Level(measure.ConcurrencyLevel(5))
	if spec == nil || len(spec.Categories) != 2 || spec.Categories[1].Category != "code" {
		t.Fatalf("spec at C=5: categories %+v", spec)
	}
	code, chat := spec.Categories[1], spec.Categories[0]
	if code.AcceptLength == nil || *code.AcceptLength < 1.9 || *code.AcceptLength > 2.1 || chat.AcceptLength != nil {
		t.Errorf("accept lengths: code %v, chat %v; want about 2 and none", code.AcceptLength, chat.AcceptLength)
	}
	if got := code.Throughput + chat.Throughput; got < 0.999*spec.SteadyThroughput || got > 1.001*spec.SteadyThroughput {
		t.Errorf("categories add up to %.1f tok/s, the level's steady throughput is %.1f", got, spec.SteadyThroughput)
	}

	var js, text bytes.Buffer
	if err := JSON(&js, v); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Scenario("spec").Level(measure.ConcurrencyLevel(5)).Categories; len(got) != 2 || *got[1].AcceptLength != *code.AcceptLength {
		t.Errorf("verdict.json categories %+v", got)
	}
	if err := Text(&text, v); err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"text": text.String()} {
		for _, want := range []string{"code", "chat", "accept length"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q", what, want)
			}
		}
	}
	if n := strings.Count(text.String(), "per category: chat "); n != 4 {
		t.Errorf("%d category lines in the text detail, want one per scenario and level (4):\n%s", n, text.String())
	}
	if !strings.Contains(text.String(), "accept length 2.") {
		t.Errorf("the text detail lacks code's accept length:\n%s", text.String())
	}
}
