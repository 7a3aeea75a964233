package verdict

import (
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// inputLengths is how level c's prompts were made their length in tokens
// over the launches' level summaries: estimated when any launch's were, so
// that a report never passes an estimate off as exact; empty when no
// summary says (the prompts asked for no lengths, or the run predates it).
func inputLengths(launches []records.Launch, c measure.Level) string {
	out := ""
	for _, l := range launches {
		if l.Result == nil {
			continue
		}
		for _, ls := range l.Result.Levels {
			if ls.Level != c || ls.InputLengths == "" {
				continue
			}
			if out == "" || ls.InputLengths == measure.LengthsEstimated {
				out = ls.InputLengths
			}
		}
	}
	return out
}
