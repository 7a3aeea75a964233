package report

import (
	"fmt"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

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

// breakEvenFigures are a crossing break-even's figures, marked for the page
// (data-field break-even, break-even-lo, break-even-hi, break-even-batch):
// the sentence says them in words, these say them as numbers a test or a
// script can read. None for a bound or no break-even.
func breakEvenFigures(x verdict.Crossover) []hPart {
	be := x.BreakEven
	if be == nil || be.Kind != verdict.BreakEvenCrosses {
		return nil
	}
	n := func(field string, v float64) hPart {
		return hPart{Text: fmt.Sprintf("%.1f", v), Field: field, Scenario: x.Scenario, Value: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	out := []hPart{txt("break-even load "), n("break-even", be.Load), txt(" ["), n("break-even-lo", be.Lo), txt(", "), n("break-even-hi", be.Hi), txt("]")}
	if be.Batch != nil {
		out = append(out, txt("; running batch there "), n("break-even-batch", be.Batch.Center))
	}
	return out
}
