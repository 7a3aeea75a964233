package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// checkGist is what the notes of one kind say when there are several of
// them, in a few words: one note per level of every scenario (the demo
// printed the same client warning 18 times) reads as one line with a count.
// A kind not named here is summed up by its first note, without where it
// is (the scenario, level and round before its first colon), the figures in
// brackets and what follows its first semicolon.
var checkGist = map[string]string{
	verdict.CheckClient:       "the load generator may have set the pace; shown as doubted, not decided",
	verdict.CheckConcurrency:  "fewer requests in flight than the level asks for",
	verdict.CheckSaturation:   "the server could not keep up with the arrivals",
	verdict.CheckInconclusive: "neither a difference nor a tie could be shown",
	verdict.CheckGreedy:       "greedy outputs differ from the baseline's",
}

// checkLine is one kind of note, counted: a line of the block of what the
// run checked, above the verdict table at the end of a run.
type checkLine struct {
	Severity string
	Text     string
}

// checkedLines sum up the verdict's notes: every problem one line, every
// kind of warning one line (the note's first clause when it is the only one of its kind,
// else how many levels or notes and what they say), most severe first, then
// one line naming the checks that passed. The notes in full are in the
// report.
func checkedLines(v *verdict.Verdict) []checkLine {
	type group struct {
		severity, check string
		notes           []verdict.Note
	}
	var groups []*group
	var passed []string
	for _, n := range v.Notes {
		if n.Severity == verdict.SeverityInfo {
			if !slices.Contains(passed, n.Check) {
				passed = append(passed, n.Check)
			}
			continue
		}
		// A problem (a failed scenario or launch) is never one of a count:
		// each is its own line.
		i := slices.IndexFunc(groups, func(g *group) bool {
			return g.severity == n.Severity && g.check == n.Check && n.Severity != verdict.SeverityRed
		})
		if i < 0 {
			groups = append(groups, &group{severity: n.Severity, check: n.Check})
			i = len(groups) - 1
		}
		groups[i].notes = append(groups[i].notes, n)
	}
	// v.Notes come most severe first; a stable sort keeps that when a
	// kind's first note is not its most severe.
	slices.SortStableFunc(groups, func(a, b *group) int { return severityRank(a.severity) - severityRank(b.severity) })
	var out []checkLine
	for _, g := range groups {
		if len(g.notes) == 1 {
			// Up to its first clause: what was found, not yet what it
			// means or what to do, which the report says.
			text, _, _ := strings.Cut(g.notes[0].Text, "; ")
			out = append(out, checkLine{g.severity, text})
			continue
		}
		gist := checkGist[g.check]
		if gist == "" {
			gist = noteGist(g.notes[0])
		}
		out = append(out, checkLine{g.severity, countOf(v, g.notes) + ": " + gist})
	}
	if len(passed) > 0 {
		out = append(out, checkLine{verdict.SeverityInfo,
			fmt.Sprintf("%s passed: %s", nouns(len(passed), "check", "checks"), strings.Join(passed, ", "))})
	}
	return out
}

// severityRank orders severities, most severe first.
func severityRank(s string) int {
	switch s {
	case verdict.SeverityRed:
		return 0
	case verdict.SeverityWarn:
		return 1
	}
	return 2
}

// countOf says how many of what the notes are about: "18 of 24 levels"
// when each is about one level of one scenario (a level with two notes, two
// rounds' say, counted once), "3 of 5 scenarios" when each is about a
// scenario of its own, else "3 notes".
func countOf(v *verdict.Verdict, notes []verdict.Note) string {
	perLevel, perScenario := true, true
	scenarios := map[string]bool{}
	type at struct {
		scenario string
		level    measure.Level
	}
	levelsNoted := map[at]bool{}
	for _, n := range notes {
		perLevel = perLevel && n.Scenario != "" && n.Level != (measure.Level{})
		perScenario = perScenario && n.Scenario != "" && n.Level == (measure.Level{}) && !scenarios[n.Scenario]
		scenarios[n.Scenario] = true
		levelsNoted[at{n.Scenario, n.Level}] = true
	}
	switch {
	case perLevel:
		levels := 0
		for _, s := range v.Scenarios {
			if !s.Failed() {
				levels += len(s.Levels)
			}
		}
		return fmt.Sprintf("%d of %d levels", len(levelsNoted), levels)
	case perScenario:
		return fmt.Sprintf("%d of %d scenarios", len(notes), len(v.Scenarios))
	}
	return fmt.Sprintf("%d notes", len(notes))
}

// bracketed is a note's figures in brackets, which a gist leaves out.
var bracketed = regexp.MustCompile(` \([^()]*\)`)

// noteGist is what a note says, not where or with which figures: without
// the scenario, level and round it starts with (up to its first colon),
// its bracketed figures, and from its first semicolon on.
func noteGist(n verdict.Note) string {
	s := n.Text
	if n.Scenario != "" {
		if _, after, ok := strings.Cut(s, ": "); ok {
			s = after
		} else {
			s = strings.TrimPrefix(s, n.Scenario)
		}
	}
	s = bracketed.ReplaceAllString(s, "")
	s, _, _ = strings.Cut(s, "; ")
	return strings.TrimSpace(s)
}

// foldedFrom is how many notes about single levels of one kind make one
// line in the notes in full: the demo's 18 client warnings, one per level,
// read as one line that names the levels.
const foldedFrom = 3

// noteItems are the notes in full, in their order, except that the notes of
// one kind about single levels, foldedFrom or more of them, are one item at
// the first one's place: how many, what they say and where ("18 of 24
// levels: the load generator may have set the pace (a at C=1, C=2; b at
// C=5)").
func noteItems(v *verdict.Verdict) []checkLine {
	type key struct{ severity, check string }
	perLevel := map[key][]verdict.Note{}
	for _, n := range v.Notes {
		if n.Scenario != "" && n.Level != (measure.Level{}) {
			k := key{n.Severity, n.Check}
			perLevel[k] = append(perLevel[k], n)
		}
	}
	var out []checkLine
	done := map[key]bool{}
	for _, n := range v.Notes {
		k := key{n.Severity, n.Check}
		group := perLevel[k]
		if len(group) < foldedFrom || n.Scenario == "" || n.Level == (measure.Level{}) {
			out = append(out, checkLine{n.Severity, n.Text})
			continue
		}
		if done[k] {
			continue
		}
		done[k] = true
		gist := checkGist[n.Check]
		if gist == "" {
			gist = noteGist(n)
		}
		out = append(out, checkLine{n.Severity, fmt.Sprintf("%s: %s (%s)", countOf(v, group), gist, levelsWhere(group))})
	}
	return out
}

// levelsWhere names the scenarios and levels notes are about: "a at C=1,
// C=2; b at C=5", in the notes' order.
func levelsWhere(notes []verdict.Note) string {
	var names []string
	at := map[string][]string{}
	for _, n := range notes {
		if _, ok := at[n.Scenario]; !ok {
			names = append(names, n.Scenario)
		}
		if name := measure.LevelName(n.Level); !slices.Contains(at[n.Scenario], name) {
			at[n.Scenario] = append(at[n.Scenario], name)
		}
	}
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + " at " + strings.Join(at[name], ", ")
	}
	return strings.Join(parts, "; ")
}
