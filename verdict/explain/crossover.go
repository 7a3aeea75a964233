package explain

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

func crossovers(v *verdict.Verdict) []verdict.Crossover {
	var out []verdict.Crossover
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline || s.Failed() {
			continue
		}
		var cells []verdict.Cell
		var levels []measure.Level
		for _, c := range v.Levels {
			if cell := v.Cell(c, s.Name); cell != nil && cell.Compared {
				cells = append(cells, *cell)
				levels = append(levels, c)
			}
		}
		sat := saturation(v, s.Name)
		if len(cells) == 0 {
			if sat != "" {
				out = append(out, verdict.Crossover{Scenario: s.Name, Sentence: s.Name + ": " + sat})
			}
			continue
		}
		x := crossoverOf(s.Name, levels, cells)
		if v.PerGPU {
			x.Sentence = s.Name + " per GPU: " + crossoverSentence(x)
		}
		if sat != "" {
			x.Sentence += "; " + sat
		}
		out = append(out, x)
	}
	return out
}

// saturation is what a variant's crossover sentence adds about the
// open-loop levels at which it or the baseline saturated, which are never
// compared ("saturated at 8 req/s; baseline saturated at 8 req/s (not
// compared)"); empty when neither did.
func saturation(v *verdict.Verdict, name string) string {
	var own, base []string
	for _, c := range v.Levels {
		if cell := v.Cell(c, name); cell != nil && cell.Saturated {
			own = append(own, measure.LevelName(c))
		}
		if cell := v.Cell(c, v.Baseline); cell != nil && cell.Saturated {
			base = append(base, measure.LevelName(c))
		}
	}
	var parts []string
	if len(own) > 0 {
		parts = append(parts, "saturated at "+strings.Join(own, ", "))
	}
	if len(base) > 0 {
		parts = append(parts, v.Baseline+" saturated at "+strings.Join(base, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + " (not compared)"
}

func crossoverOf(name string, levels []measure.Level, cells []verdict.Cell) verdict.Crossover {
	x := verdict.Crossover{Scenario: name}
	for i, c := range cells {
		sign := c.Sign()
		if n := len(x.Segments); n > 0 && x.Segments[n-1].Outcome == c.Outcome {
			seg := &x.Segments[n-1]
			seg.Levels = append(seg.Levels, levels[i])
			if moreExtreme(sign, c.DeltaPct, seg.DeltaPct) {
				seg.Extreme, seg.DeltaPct, seg.P = levels[i], c.DeltaPct, c.PAdjusted
			}
			seg.Doubts = addDoubts(seg.Doubts, c.Doubts)
			if seg.Outcome == verdict.OutcomeInconclusive && (seg.MDEPct > 0 || len(seg.Levels) == 1) {
				seg.MDEPct = math.Max(seg.MDEPct, c.MDEPct)
				if c.MDEPct <= 0 {
					seg.MDEPct = 0 // one level with no estimate: the segment has none
				}
			}
			continue
		}
		seg := verdict.Segment{Outcome: c.Outcome, Sign: sign, Levels: []measure.Level{levels[i]},
			Extreme: levels[i], DeltaPct: c.DeltaPct, P: c.PAdjusted}
		if c.Outcome == verdict.OutcomeInconclusive {
			seg.MDEPct = c.MDEPct
		}
		seg.Doubts = addDoubts(nil, c.Doubts)
		x.Segments = append(x.Segments, seg)
	}
	for i := 1; i < len(x.Segments); i++ {
		prev, cur := x.Segments[i-1], x.Segments[i]
		b := &verdict.Bracket{From: prev.Levels[len(prev.Levels)-1], To: cur.Levels[0]}
		if prev.Sign == 1 && cur.Sign != 1 && x.StopsWinning == nil {
			x.StopsWinning = b
		}
		if cur.Sign == -1 && prev.Sign != -1 && x.StartsLosing == nil {
			x.StartsLosing = b
		}
	}
	x.Sentence = name + ": " + crossoverSentence(x)
	return x
}

func moreExtreme(sign int, d, than float64) bool {
	switch sign {
	case 1:
		return d > than
	case -1:
		return d < than
	}
	return math.Abs(d) > math.Abs(than)
}

func crossoverSentence(x verdict.Crossover) string {
	if len(x.Segments) == 1 {
		s := x.Segments[0]
		span := fmt.Sprintf("%s to %s", measure.LevelName(s.Levels[0]), measure.LevelName(s.Levels[len(s.Levels)-1]))
		if len(s.Levels) == 1 {
			span = measure.LevelName(s.Levels[0])
		}
		switch s.Outcome {
		case verdict.OutcomeFaster:
			return fmt.Sprintf("wins at every level (%s), up to %s at %s (%s)", span, verdict.Pct(s.DeltaPct), measure.LevelName(s.Extreme), verdict.PClause(s.P))
		case verdict.OutcomeSlower:
			return fmt.Sprintf("loses at every level (%s), down to %s at %s (%s)", span, verdict.Pct(s.DeltaPct), measure.LevelName(s.Extreme), verdict.PClause(s.P))
		case verdict.OutcomeTie:
			return fmt.Sprintf("ties at every level (%s)", span)
		case verdict.OutcomeDoubted:
			return fmt.Sprintf("doubted at every level (%s), not decided: %s", span, doubtWords(s.Doubts))
		}
		return fmt.Sprintf("inconclusive at every level (%s): %s", span, verdict.MDEWords(s.MDEPct))
	}
	parts := make([]string, len(x.Segments))
	for i, s := range x.Segments {
		last := i == len(x.Segments)-1
		first, end := s.Levels[0], s.Levels[len(s.Levels)-1]
		span := fmt.Sprintf("from %s to %s", measure.LevelName(first), measure.LevelName(end))
		if last {
			span = fmt.Sprintf("from %s on", measure.LevelName(first))
		}
		if len(s.Levels) == 1 {
			span = fmt.Sprintf("at %s", measure.LevelName(first))
		}
		switch {
		case len(s.Levels) == 1 && s.Sign != 0:
			parts[i] = fmt.Sprintf("%s at %s (%s)", verdict.Pct(s.DeltaPct), measure.LevelName(first), verdict.PClause(s.P))
		case s.Outcome == verdict.OutcomeFaster:
			parts[i] = fmt.Sprintf("wins %s, up to %s at %s", span, verdict.Pct(s.DeltaPct), measure.LevelName(s.Extreme))
		case s.Outcome == verdict.OutcomeSlower:
			parts[i] = fmt.Sprintf("loses %s, down to %s at %s", span, verdict.Pct(s.DeltaPct), measure.LevelName(s.Extreme))
		case s.Outcome == verdict.OutcomeTie:
			parts[i] = "tie " + span
		case s.Outcome == verdict.OutcomeDoubted:
			parts[i] = fmt.Sprintf("doubted %s (%s)", span, kindWords(s.Doubts))
		default:
			parts[i] = "inconclusive " + span
		}
	}
	return strings.Join(parts, "; ")
}

// addDoubts adds to ds each doubt of more whose text it lacks.
func addDoubts(ds, more []verdict.Doubt) []verdict.Doubt {
	for _, d := range more {
		if !slices.ContainsFunc(ds, func(e verdict.Doubt) bool { return e.Text == d.Text }) {
			ds = append(ds, d)
		}
	}
	return ds
}

// doubtWords is what a sentence says of a doubted stretch: each doubt's
// words, then what would clear the first one.
func doubtWords(ds []verdict.Doubt) string {
	if len(ds) == 0 {
		return "its measurement is doubted"
	}
	var texts []string
	for _, d := range ds {
		texts = append(texts, d.Text)
	}
	out := strings.Join(texts, "; ")
	if advice := verdict.DoubtAdvice(ds[0].Kind); advice != "" {
		out += " (to clear it, " + advice + ")"
	}
	return out
}

// kindWords are a doubted stretch's kinds as a table cell names them.
func kindWords(ds []verdict.Doubt) string {
	var out []string
	for _, k := range verdict.DoubtKinds(ds) {
		out = append(out, verdict.DoubtWords(k))
	}
	if len(out) == 0 {
		return "measurement doubted"
	}
	return strings.Join(out, ", ")
}
