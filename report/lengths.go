package report

import (
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// lengthsLine says where a scenario's prompt lengths are an estimate, so a
// reader does not take its prefill work for what was asked: the levels
// whose prompts fell back to 4/3 tokens per word because the engine has no
// tokenize call. Empty when every length was made exact, or none was asked.
func lengthsLine(s verdict.Scenario) string {
	var at []string
	for _, l := range s.Levels {
		if l.InputLengths == measure.LengthsEstimated {
			at = append(at, measure.LevelName(l.Level))
		}
	}
	switch {
	case len(at) == 0:
		return ""
	case len(at) == len(s.Levels):
		return "prompt lengths " + measure.LengthsEstimated + ": the engine has no tokenize call, so prompts asked for in tokens may be shorter or longer"
	}
	return "prompt lengths " + measure.LengthsEstimated + " at " + strings.Join(at, ", ") + ": the engine's tokenize call was not used there"
}
