package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// The winner column. A row is decided when its leader is faster than every
// other scenario (a winner) or ties with the rest (a tie); otherwise it is
// undecided, and yet much may be decided in it: on a busy host the A/A pair
// stays "?" at every level while both speculative variants lose to either
// by 40%. "none decided" there said nothing of the losses, so an undecided
// row says who can still win and how many are decided behind, and "none
// decided" is left for a row where nothing is.

// noneDecided is the winner cell of an undecided level where nobody is
// decided behind and no variant ties the baseline.
const noneDecided = "none decided"

// phrase is one line of the winner cell as the stacked layout draws it;
// sep joins it to the phrase before when the cell is one line.
type phrase struct{ sep, text string }

// winnerCell is the level's winner cell on one line: "eagle3-topk4",
// "2-way tie", "baseline-nofusion or baseline, 2 behind", "none decided".
func winnerCell(r verdict.Row, baseline string) string {
	return winnerCellAs(r, baseline, true)
}

// winnerCellAs is winnerCell naming who else can be the best (named), or
// counting them ("baseline-nofusion or 1 other, 2 behind"), which a table
// short of columns takes before a narrower layout.
func winnerCellAs(r verdict.Row, baseline string, named bool) string {
	var b strings.Builder
	for i, p := range winnerPhrases(r, baseline, named) {
		if i > 0 {
			b.WriteString(p.sep)
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// winnerLines is the winner cell as lines, for the layout that gives each
// level several lines anyway: a long cell then widens the column less.
func winnerLines(r verdict.Row, baseline string, named bool) string {
	var lines []string
	for _, p := range winnerPhrases(r, baseline, named) {
		lines = append(lines, p.text)
	}
	return strings.Join(lines, "\n")
}

// winnerPhrases name the level's winner, say that the leaders tie, or say
// what an undecided row decided (undecidedPhrases). It never lists the
// scenarios behind: with every variant more the list would widen the
// table's last column, and each variant's own cell says how it compares.
// The doubted ones, left out of the decision, are counted after it.
func winnerPhrases(r verdict.Row, baseline string, named bool) []phrase {
	var ps []phrase
	switch r.Outcome {
	case verdict.RowWinner:
		ps = []phrase{{"", r.Winner}}
	case verdict.RowTie:
		ps = []phrase{{"", fmt.Sprintf("%d-way tie", len(r.Tied))}}
	case verdict.RowInconclusive:
		ps = undecidedPhrases(standingOf(r, baseline), named)
	default:
		if len(r.Doubted) > 0 {
			return []phrase{{"", "doubted"}}
		}
		return []phrase{{"", "-"}}
	}
	if len(r.Doubted) > 0 {
		// Decided among the others: the doubted ones could still be ahead.
		ps = append(ps, phrase{" ", fmt.Sprintf("(%d doubted)", len(r.Doubted))})
	}
	return ps
}

// undecidedPhrases are an undecided row's cell: who can still win, the
// leader first ("baseline-nofusion", "or baseline" when named, else "or 1
// other"; "A", "or 3 others"; or "2-way tie" when they are known to tie),
// then how many are decided behind ("2 behind"). With nobody behind: "none
// ahead, 1 tie" when some variant ties with the baseline, else "none
// decided".
func undecidedPhrases(st standing, named bool) []phrase {
	if len(st.behind) == 0 {
		switch {
		case st.tied && len(st.top) > 1:
			return []phrase{{"", fmt.Sprintf("%d-way tie", len(st.top))}}
		case st.ties > 0:
			return []phrase{{"", "none ahead"}, {", ", verdict.Plural(st.ties, "tie", "ties")}}
		}
		return []phrase{{"", noneDecided}}
	}
	var ps []phrase
	switch {
	case st.tied && len(st.top) > 1:
		ps = []phrase{{"", fmt.Sprintf("%d-way tie", len(st.top))}}
	case len(st.top) == 1:
		ps = []phrase{{"", st.top[0]}}
	case len(st.top) == 2 && named:
		ps = []phrase{{"", st.top[0]}, {" ", "or " + st.top[1]}}
	case len(st.top) == 2:
		ps = []phrase{{"", st.top[0]}, {" ", "or 1 other"}}
	default:
		ps = []phrase{{"", st.top[0]}, {" ", fmt.Sprintf("or %d others", len(st.top)-1)}}
	}
	return append(ps, phrase{", ", fmt.Sprintf("%d behind", len(st.behind))})
}

// standing is what an undecided row decided all the same. top are the
// scenarios that can still be the level's best, the leader first; behind
// those some other is decided faster than, which therefore cannot be; tied
// is set when the top are the baseline and variants each tied with it;
// ties counts the variants tied with the baseline.
type standing struct {
	top, behind []string
	tied        bool
	ties        int
}

// standingOf reads an undecided row's standing from what the verdict
// decided at the level: the leader's comparisons (the row's Unresolved
// names those the leader is not faster than, so every other measured one
// is behind it) and each variant's against the baseline (its cell), which
// can put a scenario behind the baseline, or the baseline behind a
// variant, while the leader's own comparison with it is open. A scenario
// some other is decided faster than cannot be the best, whoever beat it:
// the family's correction holds every decision at once, so one left alone
// on top through two steps (it beat one that beat the third) is the best
// though its own comparison with the third is open. The doubted are in
// neither: the row's decision leaves them out.
func standingOf(r verdict.Row, baseline string) standing {
	var st standing
	out := map[string]bool{}
	for _, c := range r.Cells {
		if !c.Present || slices.Contains(r.Doubted, c.Scenario) {
			continue
		}
		if !slices.Contains(r.Unresolved, c.Scenario) {
			out[c.Scenario] = true // the leader is faster
		}
		if !c.Compared {
			continue
		}
		switch c.Outcome {
		case verdict.OutcomeSlower:
			out[c.Scenario] = true
		case verdict.OutcomeFaster:
			out[baseline] = true
		case verdict.OutcomeTie:
			st.ties++
		}
	}
	for _, name := range r.Unresolved {
		if !out[name] {
			st.top = append(st.top, name)
		}
	}
	if len(st.top) == 0 {
		// Decisions that contradict each other (one of them an error the
		// correction allows): the row's own reading stands.
		st.top = slices.Clone(r.Unresolved)
	}
	for _, c := range r.Cells {
		if out[c.Scenario] && !slices.Contains(st.top, c.Scenario) {
			st.behind = append(st.behind, c.Scenario)
		}
	}
	st.tied = slices.Contains(st.top, baseline) && allTie(r, baseline, st.top)
	return st
}

// allTie reports whether every scenario of names but the baseline ties
// with the baseline at the row's level.
func allTie(r verdict.Row, baseline string, names []string) bool {
	for _, c := range r.Cells {
		if c.Scenario != baseline && slices.Contains(names, c.Scenario) && (!c.Compared || c.Outcome != verdict.OutcomeTie) {
			return false
		}
	}
	return true
}

// winnerTitle lists who ties, who cannot be told apart and who is decided
// behind, for the HTML cell's hover title; empty when a scenario won.
func winnerTitle(r verdict.Row, baseline string) string {
	switch r.Outcome {
	case verdict.RowTie:
		return "tied: " + strings.Join(r.Tied, " = ")
	case verdict.RowInconclusive:
		st := standingOf(r, baseline)
		s := "can still be the best: " + strings.Join(st.top, ", ")
		if len(st.behind) > 0 {
			s += "; decided behind: " + strings.Join(st.behind, ", ")
		}
		return s
	}
	if len(r.Doubted) > 0 {
		return "doubted, not decided: " + strings.Join(r.Doubted, ", ")
	}
	return ""
}
