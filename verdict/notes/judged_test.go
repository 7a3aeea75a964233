package notes

import (
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/explain"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// judged is the whole verdict, its notes included, as judge.Records makes
// it (package judge imports this one, so its tests cannot call it).
func judged(in records.Input, o verdict.Options) (*verdict.Verdict, error) {
	v, err := verdict.DecideRun(in, o)
	if err != nil {
		return nil, err
	}
	gaps := explain.Levels(v, in, o.Slices())
	explain.Crossovers(v, in.Manifest)
	v.Notes = Of(v, in, gaps)
	return v, nil
}
