package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestInterruptedRunSaysWhatHappened: a campaign of six rounds stopped in
// its second says how many rounds completed (not that it was designed with
// one), counts only the completed launches, and names the cut one.
func TestInterruptedRunSaysWhatHappened(t *testing.T) {
	sw := verdicttest.Sweep{Concurrency: []int{1, 4}, Requests: 12, MaxTokens: 32, Warmup: 1, Repeats: 1, Prompts: 20, PromptSet: "sha256:cut", Speed: 1}
	m := verdicttest.Manifest("cut", "r", "sha256:cc", "a", sw, "a", "b")
	m.Rounds = 6
	part := verdicttest.Simulate(verdicttest.Baseline, sw, 9)
	part = part[:len(part)/3] // the sweep was interrupted in its first level
	run, err := verdicttest.WriteRun(filepath.Join(t.TempDir(), "run"), m, []verdicttest.Scenario{
		{Name: "a", Rounds: [][]measure.Record{verdicttest.Simulate(verdicttest.Baseline, sw, 1), verdicttest.Simulate(verdicttest.Baseline, sw, 2)}},
		{Name: "b", Rounds: [][]measure.Record{verdicttest.Simulate(verdicttest.Baseline, sw, 3), part}, Cut: []int{2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.RoundsCompleted != 1 || v.RoundsPlanned != 6 {
		t.Fatalf("rounds %d of %d planned completed, want 1 of 6 (a's two launches complete, b's second cut)", v.RoundsCompleted, v.RoundsPlanned)
	}
	var b strings.Builder
	if err := Text(&b, v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"1 of 6 planned rounds completed: launch-to-launch variation not yet measured",
		"round 2: cut, not counted; anything it measured stays in b/round-2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "each scenario was launched once (rounds: 1)") {
		t.Errorf("the report calls an interrupted six-round campaign a design of one round:\n%s", out)
	}
	// b's block counts its one completed launch, not the cut one.
	block := out[strings.LastIndex(out, "\nb"):]
	if strings.Contains(block, "launches: 2") || !strings.Contains(block, "launches: 1") {
		t.Errorf("b's block counts the cut launch:\n%s", block)
	}
	for _, n := range v.Notes {
		if strings.Contains(n.Text, "launched once each") && !strings.Contains(n.Text, "1 of 6 planned rounds completed: resume the run") {
			t.Errorf("note: %s", n.Text)
		}
	}
}
