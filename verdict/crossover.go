package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// Crossover says, for one variant, where it wins, ties, loses or cannot be
// told from the baseline across the levels, from the corrected comparisons'
// outcomes only.
type Crossover struct {
	Scenario string `json:"scenario"`
	// Sentence is the whole story in one line, e.g. "eagle3-topk4: +3.8% at
	// C=1 (p=0.002); tie at C=2; loses from C=5 on, down to −54% at C=250".
	Sentence string    `json:"sentence"`
	Segments []Segment `json:"segments"`
	// StopsWinning brackets the first place where the variant, having won,
	// no longer wins: it won at From and did not at To. Nil when it never
	// won or never stopped winning.
	StopsWinning *Bracket `json:"stops_winning,omitempty"`
	// StartsLosing brackets the first place where the variant, not having
	// lost, starts losing: From is the last level before it lost, To the
	// first where it did. Nil when it never loses or loses from the first level.
	StartsLosing *Bracket `json:"starts_losing,omitempty"`
	// Why gives, beside the sentence, the figures that explain the turn:
	// the variant's accept length and the server's running batch over the
	// levels (why.go); empty when there is no turn or no such figure.
	Why string `json:"why,omitempty"`
	// BreakEven is where the speedup crosses 1, or the bound the levels
	// give (breakeven.go); nil for a variant never compared.
	BreakEven *BreakEven `json:"break_even,omitempty"`
}

// Bracket is a pair of adjacent measured levels.
type Bracket struct {
	From measure.Level `json:"from"`
	To   measure.Level `json:"to"`
}

// Segment is a run of adjacent measured levels with the same outcome.
type Segment struct {
	// Outcome is the comparisons' outcome (OutcomeFaster, …); Sign is +1
	// (faster), −1 (slower) or 0 (tie or inconclusive).
	Outcome string          `json:"outcome"`
	Sign    int             `json:"sign"`
	Levels  []measure.Level `json:"levels"`
	// Extreme is the level with the largest delta in the segment's
	// direction (for a tie, the one with the largest |delta|).
	Extreme  measure.Level `json:"extreme"`
	DeltaPct float64       `json:"delta_pct"`
	// P is the corrected p-value at Extreme.
	P float64 `json:"p"`
	// MDEPct is, for an inconclusive segment, the largest of its levels'
	// detectable differences.
	MDEPct float64 `json:"mde_pct,omitempty"`
}

func crossovers(v *Verdict) []Crossover {
	var out []Crossover
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline || s.Failed() {
			continue
		}
		var cells []Cell
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
				out = append(out, Crossover{Scenario: s.Name, Sentence: s.Name + ": " + sat})
			}
			continue
		}
		x := crossoverOf(s.Name, levels, cells)
		if v.PerGPU {
			x.Sentence = s.Name + " per GPU: " + x.describe()
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
func saturation(v *Verdict, name string) string {
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

func crossoverOf(name string, levels []measure.Level, cells []Cell) Crossover {
	x := Crossover{Scenario: name}
	for i, c := range cells {
		sign := c.Sign()
		if n := len(x.Segments); n > 0 && x.Segments[n-1].Outcome == c.Outcome {
			seg := &x.Segments[n-1]
			seg.Levels = append(seg.Levels, levels[i])
			if moreExtreme(sign, c.DeltaPct, seg.DeltaPct) {
				seg.Extreme, seg.DeltaPct, seg.P = levels[i], c.DeltaPct, c.PAdjusted
			}
			if seg.Outcome == OutcomeInconclusive && (seg.MDEPct > 0 || len(seg.Levels) == 1) {
				seg.MDEPct = math.Max(seg.MDEPct, c.MDEPct)
				if c.MDEPct <= 0 {
					seg.MDEPct = 0 // one level with no estimate: the segment has none
				}
			}
			continue
		}
		seg := Segment{Outcome: c.Outcome, Sign: sign, Levels: []measure.Level{levels[i]},
			Extreme: levels[i], DeltaPct: c.DeltaPct, P: c.PAdjusted}
		if c.Outcome == OutcomeInconclusive {
			seg.MDEPct = c.MDEPct
		}
		x.Segments = append(x.Segments, seg)
	}
	for i := 1; i < len(x.Segments); i++ {
		prev, cur := x.Segments[i-1], x.Segments[i]
		b := &Bracket{From: prev.Levels[len(prev.Levels)-1], To: cur.Levels[0]}
		if prev.Sign == 1 && cur.Sign != 1 && x.StopsWinning == nil {
			x.StopsWinning = b
		}
		if cur.Sign == -1 && prev.Sign != -1 && x.StartsLosing == nil {
			x.StartsLosing = b
		}
	}
	x.Sentence = name + ": " + x.describe()
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

func (x Crossover) describe() string {
	if len(x.Segments) == 1 {
		s := x.Segments[0]
		span := fmt.Sprintf("%s to %s", measure.LevelName(s.Levels[0]), measure.LevelName(s.Levels[len(s.Levels)-1]))
		if len(s.Levels) == 1 {
			span = measure.LevelName(s.Levels[0])
		}
		switch s.Outcome {
		case OutcomeFaster:
			return fmt.Sprintf("wins at every level (%s), up to %s at %s (%s)", span, Pct(s.DeltaPct), measure.LevelName(s.Extreme), PClause(s.P))
		case OutcomeSlower:
			return fmt.Sprintf("loses at every level (%s), down to %s at %s (%s)", span, Pct(s.DeltaPct), measure.LevelName(s.Extreme), PClause(s.P))
		case OutcomeTie:
			return fmt.Sprintf("ties at every level (%s)", span)
		}
		return fmt.Sprintf("inconclusive at every level (%s): %s", span, mdeWords(s.MDEPct))
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
			parts[i] = fmt.Sprintf("%s at %s (%s)", Pct(s.DeltaPct), measure.LevelName(first), PClause(s.P))
		case s.Outcome == OutcomeFaster:
			parts[i] = fmt.Sprintf("wins %s, up to %s at %s", span, Pct(s.DeltaPct), measure.LevelName(s.Extreme))
		case s.Outcome == OutcomeSlower:
			parts[i] = fmt.Sprintf("loses %s, down to %s at %s", span, Pct(s.DeltaPct), measure.LevelName(s.Extreme))
		case s.Outcome == OutcomeTie:
			parts[i] = "tie " + span
		default:
			parts[i] = "inconclusive " + span
		}
	}
	return strings.Join(parts, "; ")
}

// Pct formats a percentage delta with its sign and a true minus sign, e.g.
// "+3.8%" or "−54.0%".
func Pct(d float64) string {
	s := fmt.Sprintf("%+.1f%%", d)
	return strings.Replace(s, "-", "−", 1)
}

// FormatP formats a p-value with three decimals, "<0.001" below that.
func FormatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// PClause is "p=0.002", or "p<0.001" below that.
func PClause(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}
