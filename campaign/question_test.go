package campaign

import (
	"slices"
	"testing"
)

// TestQuestion: question: select with its select key is read, the defaults
// are a comparison with the baseline and the race's own, and a question
// the campaign cannot run is an error at its line.
func TestQuestion(t *testing.T) {
	c, errs := loadMem(t, top("rounds: {min: 2, max: 6}\nquestion: select\nselect: {delta: 3%, pcs: 90%, first_stage: 3}\n"))
	if errs != nil {
		t.Fatal(errs)
	}
	if c.Question != QuestionSelect || c.Select != (Select{DeltaPct: 3, PCS: 0.9, FirstStage: 3}) {
		t.Errorf("question %q, select %+v", c.Question, c.Select)
	}
	c, errs = loadMem(t, goodFiles)
	if errs != nil || c.QuestionOrDefault() != QuestionCompare || c.Select != (Select{}) {
		t.Errorf("defaults: %v, %q, %+v", errs, c.QuestionOrDefault(), c.Select)
	}
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"unknown question", "question: best\n",
			`c/configs/camp.yaml:9:11: question: "best" is not a question bakeoff asks (compare: each variant against the baseline; select: the best configuration at each level)`},
		{"select without the question", "rounds: 4\nselect: {delta: 2%}\n",
			"c/configs/camp.yaml:10:9: select: tunes the race of question: select, and this campaign asks compare"},
		{"one round", "rounds: 1\nquestion: select\n",
			"c/configs/camp.yaml:10:11: question: select races configurations over rounds of launches, and rounds is 1; give at least 2, e.g. rounds: {min: 2, max: 12}"},
		{"a first stage longer than the campaign", "rounds: 3\nquestion: select\nselect: {first_stage: 4}\n",
			"c/configs/camp.yaml:11:9: select.first_stage: 4 rounds, more than the campaign's 3"},
		{"a zero delta", "rounds: 3\nquestion: select\nselect: {delta: 0%}\n",
			"c/configs/camp.yaml:11:17: select.delta: want a difference between 0% and 100%, e.g. 2%"},
		{"a pcs of a guess", "rounds: 3\nquestion: select\nselect: {pcs: 40%}\n",
			"c/configs/camp.yaml:11:15: select.pcs: want a probability of correct selection from 50% to under 100%, e.g. 95%"},
		{"the defaults race", "rounds: 3\nquestion: select\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := loadMem(t, top(tc.extra))
			if tc.want == "" {
				if errs != nil {
					t.Errorf("errors %q, want none", errs)
				}
				return
			}
			if !slices.Contains(errs, tc.want) {
				t.Errorf("errors %q, want %q", errs, tc.want)
			}
		})
	}
}
