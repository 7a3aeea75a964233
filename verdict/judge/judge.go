// Package judge computes a run's whole verdict, in the order each part
// needs the one before: package verdict measures every level and applies
// the decision rule, package explain adds the figures that explain the
// outcomes (accept length, the server's timeline, energy, crossovers,
// break-evens), and package notes says what in the measurement to doubt
// or to trust. The rule reads neither the explanations nor the notes.
package judge

import (
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/explain"
	"github.com/bakeoff-dev/bakeoff/verdict/notes"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// Run reads the records of every launch of every scenario from the run
// directory (records.Read) and computes the verdict, with what the
// campaign spent on it. A run written before rounds reads as one round.
// Failed launches are listed without measurements; a launch whose records
// cannot be read is an error.
func Run(run *results.Run, o verdict.Options) (*verdict.Verdict, error) {
	in, err := records.Read(run)
	if err != nil {
		return nil, err
	}
	v, err := Records(in, o)
	if err != nil {
		return nil, err
	}
	cost := verdict.Cost(v, run)
	v.Cost = &cost
	return v, nil
}

// Records computes the verdict from records already in memory.
func Records(in records.Input, o verdict.Options) (*verdict.Verdict, error) {
	v, err := verdict.DecideRun(in, o)
	if err != nil {
		return nil, err
	}
	gaps := explain.Levels(v, in, o.Slices())
	explain.Crossovers(v, in.Manifest)
	v.Notes = notes.Of(v, in, gaps)
	withSelection(v, in.Manifest)
	return v, nil
}
