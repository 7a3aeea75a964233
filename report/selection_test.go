package report

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/policy"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// raceFixture is a race of four configurations at two levels, its figures
// fixed: spec.steps2 best at C=1 by 3%, off best at C=64 by 10% and more,
// spec.steps4 out of the race at both levels after the first stage, and a
// confirmation round after the race.
func raceFixture(t *testing.T) *verdict.Verdict {
	t.Helper()
	configs := []string{"off", "spec.steps1", "spec.steps2", "spec.steps4"}
	truth := [][]float64{{100, 900}, {104, 800}, {107, 780}, {80, 500}}
	wobble := []float64{0.004, -0.006, 0.002, -0.001, 0.005, -0.003, 0.001, -0.004}
	var rounds []selection.Round
	for r := range 8 {
		round := make(selection.Round, len(configs))
		for i := range configs {
			round[i] = make([]float64, 2)
			for c := range 2 {
				round[i][c] = math.Log(truth[i][c]) + wobble[(r+3*i+c)%len(wobble)]
			}
		}
		rounds = append(rounds, round)
	}
	res, _, err := selection.Replay(configs, []string{"C=1", "C=64"}, rounds, selection.Options{Delta: 0.02, FirstStage: 2, MaxRounds: 7})
	if err != nil {
		t.Fatal(err)
	}
	return &verdict.Verdict{Rounds: 8, Selection: res}
}

// TestSelectionText: the serving policy, the envelope and the race's
// picture, as the last screen shows them. Golden.
func TestSelectionText(t *testing.T) {
	v := raceFixture(t)
	if !v.Selection.Done {
		t.Fatalf("the fixture's race did not end: %+v", v.Selection)
	}
	var b bytes.Buffer
	if err := writeSelection(&b, v, 110); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "selection.txt"), b.Bytes())
}

// TestSelectionHTML: the page has the race's section, with its table and
// the configurations that left, each with why.
func TestSelectionHTML(t *testing.T) {
	v := raceFixture(t)
	secs := selectionHTML(v)
	if len(secs) != 1 || len(secs[0].Table.Rows) != 2 {
		t.Fatalf("sections %+v", secs)
	}
	want := "spec.steps4 left after round 2: behind spec.steps2 by 25.3% at C=1; behind off by 44.3% at C=64"
	if !slices.Contains(secs[0].Lines, want) {
		t.Errorf("lines %q lack %q", secs[0].Lines, want)
	}
	if selectionHTML(&verdict.Verdict{}) != nil {
		t.Error("a comparison has a race section")
	}
}

// TestSelectionPolicyText: the policy as one engine setting, where the
// run's folder holds it and how to check it; a policy that is not one
// setting, with why; and a race that checks a written policy. Golden.
func TestSelectionPolicyText(t *testing.T) {
	chain := func(name, steps string) policy.Config {
		return policy.Config{Name: name, Engine: "sglang", Model: "/m", Args: []policy.Arg{
			{Key: "speculative-algorithm", Values: []string{"EAGLE3"}},
			{Key: "speculative-num-steps", Values: []string{steps}},
			{Key: "tp-size", Values: []string{"8"}},
		}}
	}
	off := policy.Config{Name: "off", Engine: "sglang", Model: "/m", Args: []policy.Arg{{Key: "tp-size", Values: []string{"8"}}}}
	var b bytes.Buffer
	v := raceFixture(t)
	configs := map[string]policy.Config{"off": off, "spec.steps2": chain("spec.steps2", "2")}
	v.Policy = policy.Write(policy.Bands(v.Selection), configs)
	if v.Policy == nil || v.Policy.Setting == nil {
		t.Fatalf("not written: %+v", v.Policy)
	}
	if err := writeSelection(&b, v, 110); err != nil {
		t.Fatal(err)
	}
	tree := chain("spec.steps2", "2")
	tree.Args = append(tree.Args, policy.Arg{Key: "speculative-eagle-topk", Values: []string{"4"}})
	configs["spec.steps2"] = tree
	v.Policy = policy.Write(policy.Bands(v.Selection), configs)
	b.WriteString("\n-- not one setting --\n")
	for _, l := range policyLines(v) {
		b.WriteString(l + "\n")
	}
	// The same race read as a check of a policy named spec.steps2.
	v.Policy = nil
	v.PolicyCheck = policy.Check(renamed(v.Selection, "spec.steps2", policy.ScenarioName))
	b.WriteString("\n-- a check --\n")
	b.WriteString(v.PolicyCheck.Sentence() + "\n")
	golden.Check(t, filepath.Join("testdata", "selection-policy.txt"), b.Bytes())
}

// renamed is res with one configuration's name replaced.
func renamed(res *selection.Result, from, to string) *selection.Result {
	data, err := json.Marshal(res)
	if err != nil {
		panic(err)
	}
	data = bytes.ReplaceAll(data, []byte(`"`+from+`"`), []byte(`"`+to+`"`))
	var out selection.Result
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return &out
}
