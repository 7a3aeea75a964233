package verdict

import (
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// Judged computes a whole verdict, the explanations and notes included
// (judge.Records), for the tests here that read them beside the rule's
// outcomes: an A/A campaign's crossover sentence, a doubted level's note.
// Package judge imports this one, so judge_hook_test.go, an external test
// file of this directory, sets it.
var Judged func(records.Input, Options) (*Verdict, error)

// decideDir is DecideRun over a run directory, with what the campaign
// spent; judgedDir the same with Judged.
func decideDir(run *results.Run, o Options) (*Verdict, error) { return fromDir(run, o, DecideRun) }
func judgedDir(run *results.Run, o Options) (*Verdict, error) { return fromDir(run, o, Judged) }

func fromDir(run *results.Run, o Options, compute func(records.Input, Options) (*Verdict, error)) (*Verdict, error) {
	in, err := records.Read(run)
	if err != nil {
		return nil, err
	}
	v, err := compute(in, o)
	if err != nil {
		return nil, err
	}
	cost := Cost(v, run)
	v.Cost = &cost
	return v, nil
}
