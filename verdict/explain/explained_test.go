package explain

import (
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// realBaseline is the seeds' baseline under the noise a real host adds.
var realBaseline = verdicttest.RealisticNoise(verdicttest.Baseline)

// explained is the decided verdict with its explanations, as judge.Records
// makes it before the notes.
func explained(in records.Input, o verdict.Options) (*verdict.Verdict, error) {
	v, err := verdict.DecideRun(in, o)
	if err != nil {
		return nil, err
	}
	Levels(v, in, o.Slices())
	Crossovers(v, in.Manifest)
	return v, nil
}
