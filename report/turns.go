package report

import "github.com/bakeoff-dev/bakeoff/verdict"

// turnLines are what a variant's crossover adds under its sentence: the
// figures that explain its turn and its break-even load (or the bound the
// levels give), each a line; none when there is nothing to say.
func turnLines(x verdict.Crossover) []string {
	var out []string
	if x.Why != "" {
		out = append(out, "why: "+x.Why)
	}
	if be := x.BreakEven; be != nil && be.Kind != verdict.BreakEvenNone {
		out = append(out, "break-even: "+be.Sentence)
	}
	return out
}
