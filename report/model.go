// Package report renders a verdict: the side-by-side terminal table, a
// Markdown verdict for a pull request, CSV, JSON, the Go benchmark text
// format that benchstat reads, the HTML page and plots; and the comparison
// of two runs that rundiff.Compare computes. Every renderer is a pure function
// of a verdict.Verdict (or a rundiff.Result), which is itself a pure
// function of run directories: no statistic is computed here.
package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// table is a rendered-to-strings grid: the model every table renderer draws.
type table struct {
	Header []string
	Rows   [][]string
}

// sideBySide is the main table: one row per level, per scenario its
// throughput ± CI and, for variants, the delta against the baseline with its
// significance, then the winner, with who else can be the best named or
// counted (winnerCellAs).
func sideBySide(v *verdict.Verdict, named bool) table { return sideBySideIn(v, "tok/s", named) }

// sideBySideIn is sideBySide for figures in unit (tableTextIn).
func sideBySideIn(v *verdict.Verdict, unit string, named bool) table {
	t := table{Header: []string{levelHeader(v)}}
	for _, s := range v.Scenarios {
		if s.Failed() {
			continue
		}
		t.Header = append(t.Header, s.Name+" "+unit)
		if s.Name != v.Baseline {
			t.Header = append(t.Header, "vs "+v.Baseline)
		}
	}
	t.Header = append(t.Header, "winner")
	for _, row := range v.Rows {
		r := []string{measure.LevelLabel(row.Level)}
		for i, s := range v.Scenarios {
			if s.Failed() {
				continue
			}
			c := row.Cells[i]
			r = append(r, throughputCell(c))
			if s.Name != v.Baseline {
				r = append(r, strings.TrimSpace(deltaCell(c)+" "+bracketCell(c)))
			}
		}
		r = append(r, winnerCellAs(row, v.Baseline, named))
		t.Rows = append(t.Rows, r)
	}
	return t
}

func throughputCell(c verdict.Cell) string {
	if c.Saturated {
		return "saturated"
	}
	if !c.Present {
		return "-"
	}
	return estimate(c.Throughput) + perGPUSuffix(c)
}

// estimate is "773.1 ±1.2%": the center and the half-width of its interval.
func estimate(e verdict.Estimate) string {
	return fmt.Sprintf("%.1f ±%s", e.Center, halfWidth(e))
}

func halfWidth(e verdict.Estimate) string {
	return hwText(e.HalfWidthPct()) + "%"
}

// deltaCell shows the comparison's outcome, each of the three its own way:
// a win or loss as the delta with its corrected p-value, a tie as "tie"
// with the delta, and an inconclusive level as "?" with the delta and the
// smallest difference the run could have detected (or the minimum effect it
// fell short of).
func deltaCell(c verdict.Cell) string {
	if !c.Compared {
		return "-"
	}
	var s string
	switch c.Outcome {
	case verdict.OutcomeDoubted:
		return doubtCell(c.Doubts)
	case verdict.OutcomeFaster, verdict.OutcomeSlower:
		s = fmt.Sprintf("%s (%s)", verdict.Pct(c.DeltaPct), verdict.PClause(c.PAdjusted))
	case verdict.OutcomeTie:
		s = fmt.Sprintf("tie (%s)", verdict.Pct(c.DeltaPct))
	default:
		s = fmt.Sprintf("? (%s, %s)", verdict.Pct(c.DeltaPct), mdeShort(c.Comparison))
	}
	if c.Hopeless {
		s += " ¹"
	}
	return s
}

// doubtCell is a doubted comparison's cell: "doubted: client set the pace",
// the kinds of doubt without the figures, which the notes give. It shows
// no change: a number in the cell would be read as a result.
func doubtCell(ds []verdict.Doubt) string {
	var words []string
	for _, k := range verdict.DoubtKinds(ds) {
		words = append(words, verdict.DoubtWords(k))
	}
	return "doubted: " + strings.Join(words, ", ")
}

// bracketCell is the interval the cell's outcome was decided on, as changes
// in percent with its confidence: "[−1.2, +0.8] 90%" for a tie or an
// inconclusive level (the two one-sided tests' interval), "[−17.1, −12.6]
// 99.6%" for a win or loss (the corrected test's level). ", 5 paired" follows
// when the change is the paired estimate over fewer rounds than the
// throughputs above it average; empty without an interval.
func bracketCell(c verdict.Cell) string {
	if !c.Compared || !(c.OutcomeLo > 0) || c.OutcomeConfidence <= 0 {
		return ""
	}
	s := fmt.Sprintf("[%s, %s] %s", signed(100*(c.OutcomeLo-1)), signed(100*(c.OutcomeHi-1)), confText(c.OutcomeConfidence))
	if c.PairedOnly {
		s += fmt.Sprintf(", %d paired", c.Rounds)
	}
	return s
}

// confText is a confidence as a percentage with the fewest decimals (one at
// least past 90%) that do not round it up to 100%: "90%", "99.6%", "99.96%".
func confText(conf float64) string {
	for d := 1; d < 6; d++ {
		s := strconv.FormatFloat(100*conf, 'f', d, 64)
		if v, _ := strconv.ParseFloat(s, 64); v < 100 {
			return strings.TrimSuffix(strings.TrimRight(s, "0"), ".") + "%"
		}
	}
	return "100%"
}

// mdeShort is "MDE 3.4%", "MDE > 100%" (verdict.MDEShort), "under
// min_effect" or "no MDE".
func mdeShort(c verdict.Comparison) string {
	if c.BelowMinEffect {
		return "under min_effect"
	}
	return verdict.MDEShort(c.MDEPct)
}

// legend explains the three outcomes of the table's cells and the interval
// under each.
func legend(v *verdict.Verdict) string {
	tie := 100 * (1 - 2*v.Alpha)
	s := fmt.Sprintf("+x%% / −x%%: faster or slower (p < %v after %s over %s); tie: the %.0f%% interval of the ratio within ±%s; ?: inconclusive, MDE the smallest difference this run could detect (80%% power); [lo, hi]: the interval the outcome was decided on, at the corrected test's level for a win or loss, at %.0f%% for a tie or ?",
		v.Alpha, correctionName(v.Correction), familyText(v), tie, trimPct(v.EquivalenceMarginPct), tie)
	if doubtedCells(v) {
		s += "; doubted: bakeoff's own checks question a side's measurement at that level (the notes say why and what to do), so it is not decided"
		if v.Sequential == nil {
			s += " and not in the corrected family"
		} else {
			// The sequential family keeps it, untested while doubted, so
			// that a replay tests the others at the run's levels.
			s += " (it stays in the corrected family, untested)"
		}
	}
	if pairedCells(v) {
		s += "; N paired: the change is the geometric mean of the rounds' paired ratios over the N rounds before its deciding look, fewer than the launches the throughputs average, so it need not be their ratio"
	} else {
		s += "; the change is the geometric mean of the rounds' paired ratios, equal to the ratio of the throughputs shown"
	}
	return s
}

// familyText names the corrected family and its parts: "12 comparisons,
// every pair of scenarios at each level", "39 comparisons: 36 pairs of
// scenarios at a level and 3 capacities".
func familyText(v *verdict.Verdict) string {
	if v.CapacityComparisons == 0 {
		return fmt.Sprintf("%s, every pair of scenarios at each level", nouns(v.Comparisons, "comparison", "comparisons"))
	}
	return fmt.Sprintf("%s: %s of scenarios at a level and %s", nouns(v.Comparisons, "comparison", "comparisons"),
		nouns(v.Comparisons-v.CapacityComparisons, "pair", "pairs"), nouns(v.CapacityComparisons, "capacity", "capacities"))
}

// nouns is "1 pair" or "36 pairs".
func nouns(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// doubtedCells reports whether some comparison in the table is doubted.
func doubtedCells(v *verdict.Verdict) bool {
	for _, r := range v.Rows {
		if len(r.Doubted) > 0 {
			return true
		}
	}
	return false
}

// pairedCells reports whether some cell's change is paired over fewer
// rounds than its throughputs average.
func pairedCells(v *verdict.Verdict) bool {
	for _, r := range v.Rows {
		for _, c := range r.Cells {
			if c.PairedOnly {
				return true
			}
		}
	}
	return false
}

// roundsLine says how many launches stand behind the figures and, with one
// per scenario, that launch-to-launch variation was not measured.
func roundsLine(v *verdict.Verdict) string {
	if v.RoundsCompleted < v.RoundsPlanned {
		// Cut short: say what happened, not what the design would have been.
		done := fmt.Sprintf("%d of %d planned rounds completed", v.RoundsCompleted, v.RoundsPlanned)
		if v.RoundsCompleted <= 1 {
			return fmt.Sprintf("%s: launch-to-launch variation not yet measured, so the intervals see only the noise within one launch, and a winner needs a difference of at least %s (min_effect); resume the run to complete it",
				done, trimPct(v.MinEffectPct))
		}
		return fmt.Sprintf("%s: each variant compared with the baseline launched in the same round, intervals from the launch-to-launch variation of those; resume the run to complete it", done)
	}
	if sq := v.Sequential; sq != nil {
		lo, hi := 0, 0
		for _, vs := range sq.Variants {
			if lo == 0 || vs.Rounds < lo {
				lo = vs.Rounds
			}
			hi = max(hi, vs.Rounds)
		}
		each := fmt.Sprintf("%d", lo)
		if hi > lo {
			each = fmt.Sprintf("%d–%d", lo, hi)
		}
		return fmt.Sprintf("sequential rounds (%d to %d): the baseline launched %d times, each variant until decided (%s rounds), each compared with the baseline launched in the same round; intervals from the launch-to-launch variation",
			sq.MinRounds, sq.MaxRounds, v.Rounds, each)
	}
	if v.Rounds <= 1 {
		return fmt.Sprintf("launch-to-launch variation not measured: each scenario was launched once (rounds: 1), so the intervals see only the noise within one launch, and a winner needs a difference of at least %s (min_effect)",
			trimPct(v.MinEffectPct))
	}
	if v.Parts > 0 {
		// Split over a fleet: the baseline was launched once per part, so
		// the rounds are the replicates, not the results rounds.
		hosts := ""
		if len(v.Hosts) > 1 {
			hosts = fmt.Sprintf(" over %d hosts", len(v.Hosts))
		}
		return fmt.Sprintf("%d rounds, split into %d parts%s: every variant launched %d times, each compared with the baseline launched on its host in its part; intervals from the launch-to-launch variation",
			v.Rounds, v.Parts, hosts, v.Rounds)
	}
	return fmt.Sprintf("%d rounds: every scenario launched %d times, each variant compared with the baseline launched in the same round; intervals from the launch-to-launch variation",
		v.Rounds, v.Rounds)
}

// trimPct is "5%" or "2.5%".
func trimPct(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".") + "%"
}

// hasHopeless reports whether any cell carries the "too few samples" mark.
func hasHopeless(v *verdict.Verdict) bool {
	for _, r := range v.Rows {
		for _, c := range r.Cells {
			if c.Hopeless {
				return true
			}
		}
	}
	return false
}

const hopelessFootnote = "¹ too few launches or samples to ever reach significance at this level"

// acceptLengths lists the speculative scenarios' accept lengths, overall
// and per level (with the interval across launches when there are several),
// one line each, ending with where the level figures came from.
func acceptLengths(v *verdict.Verdict) []string {
	var out []string
	for _, s := range v.Scenarios {
		var parts, sources []string
		for _, l := range s.Levels {
			if l.AcceptLength == nil {
				continue
			}
			part := fmt.Sprintf("%s %.2f", measure.LevelName(l.Level), *l.AcceptLength)
			if a := l.Accept; a != nil {
				if a.Length.N >= 2 {
					part += fmt.Sprintf(" [%.2f, %.2f]", a.Length.Lo, a.Length.Hi)
				}
				if a.Source != "" && !slices.Contains(sources, a.Source) {
					sources = append(sources, a.Source)
				}
			}
			parts = append(parts, part)
		}
		if s.AcceptLength == nil && len(parts) == 0 {
			continue
		}
		line := s.Name + ": accept length"
		if s.AcceptLength != nil {
			line += fmt.Sprintf(" %.2f", *s.AcceptLength)
		}
		if len(parts) > 0 {
			line += " (" + strings.Join(parts, ", ") + ")"
		}
		if len(sources) > 0 {
			line += "; from " + strings.Join(sources, "; ")
		}
		out = append(out, line)
	}
	return out
}

// noteMark is the prefix a note gets in plain text.
func noteMark(n verdict.Note) string {
	switch n.Severity {
	case verdict.SeverityRed:
		return "!! "
	case verdict.SeverityWarn:
		return "!  "
	}
	return "ok "
}

// detailLines are a scenario's levels, one line each: the level, then
// each of its columns (levelColumnsAt, but the per-round ones) as "head:
// value", each value padded to the column's widest so that the lines align.
// A saturated level's figures grow with its length: its line says what was
// seen instead.
func detailLines(ps []float64, s verdict.Scenario) []string {
	cols := columnsOf(ps, &s, false)
	cells := make([][]string, len(s.Levels))
	widths := make([]int, len(cols))
	for i := range s.Levels {
		for j, c := range cols {
			t := c.text(&s.Levels[i])
			cells[i] = append(cells[i], t)
			widths[j] = max(widths[j], utf8.RuneCountInString(t))
		}
	}
	out := make([]string, len(s.Levels))
	for i, l := range s.Levels {
		parts := []string{"  " + detailLevel(l.Level)}
		for j, c := range cols {
			if l.Saturated && !c.Saturated {
				parts = append(parts, "SATURATED: "+l.Saturation)
				break
			}
			parts = append(parts, fmt.Sprintf("%s: %*s", c.Head, widths[j], cells[i][j]))
		}
		out[i] = strings.Join(parts, " | ")
	}
	return out
}

// levelHeader names the level column: C for concurrency, req/s for rates.
func levelHeader(v *verdict.Verdict) string {
	if len(v.Levels) > 0 {
		return measure.LevelAxis(v.Levels[0])
	}
	return "C"
}

// levelHeaderOf is levelHeader for one scenario's levels.
func levelHeaderOf(ls []verdict.Level) string {
	if len(ls) > 0 {
		return measure.LevelAxis(ls[0].Level)
	}
	return "C"
}

// detailLevel is the level as the detail lines start: "C=  4" or "0.5/s".
func detailLevel(level measure.Level) string {
	if measure.IsRate(level) {
		return measure.LevelLabel(level)
	}
	return fmt.Sprintf("C=%3d", level.Concurrency)
}

// cutLines names a scenario's launches that were cut (interrupted before
// they finished): not counted, their records kept where they are.
func cutLines(s verdict.Scenario) []string {
	var out []string
	for _, l := range s.Launches {
		if !l.Cut() {
			continue
		}
		where := ""
		if l.FailedPhase != "" {
			where = " during " + l.FailedPhase
		}
		kept := ""
		if l.Dir != "" {
			kept = "; anything it measured stays in " + l.Dir
		}
		out = append(out, fmt.Sprintf("  round %d: cut%s, not counted%s", l.Round, where, kept))
	}
	return out
}
