package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/policy"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// writeSelection writes a selection campaign's answer (question: select):
// the serving policy, one row per level with the configuration to serve,
// its runner-up and its advantage measured on the confirmation round, the
// envelope over the best single configuration, and the race as a picture,
// a row per configuration and a column per round.
func writeSelection(w io.Writer, v *verdict.Verdict, width int) error {
	res := v.Selection
	if res == nil {
		return nil
	}
	ew := &errWriter{w: w}
	prose := func(s, first, rest string) {
		for _, l := range fold(s, foldWidth(width), first, rest) {
			fmt.Fprintln(ew, l)
		}
	}
	fmt.Fprintln(ew)
	prose(selectionHeading(res), "", "  ")
	if err := renderTable(ew, selectionTable(res), nil); err != nil {
		return err
	}
	for _, s := range policyLines(v) {
		prose(s, "", "  ")
	}
	fmt.Fprintln(ew)
	prose("The race, a column per round (■ launched, c confirmation; a row ends where the configuration left):", "", "  ")
	for _, l := range raceLines(res, v.Rounds) {
		fmt.Fprintln(ew, l)
	}
	return ew.err
}

// selectionTable is the serving policy, a row per level: the configuration
// to serve, its runner-up, the advantage and when the level was decided.
func selectionTable(res *selection.Result) table {
	t := table{Header: []string{"level", "serve", "runner-up", "advantage", "decided"}}
	for _, l := range res.Levels {
		t.Rows = append(t.Rows, []string{l.Level, servedText(l), orDash(l.RunnerUp), advantageText(l), decidedText(res, l)})
	}
	return t
}

// selectionHeading says what was asked and what the answer guarantees.
func selectionHeading(res *selection.Result) string {
	what := "The best configuration per level"
	if slices.ContainsFunc(res.Levels, func(l selection.LevelResult) bool { return l.Level == policy.CapacityLevel }) {
		what += " and for SLO capacity"
	}
	return fmt.Sprintf(what+": a race (Kim & Nelson's fully sequential selection) with an indifference zone of ±%s and a %s probability of correct selection at each level, over %d rounds:",
		trimPct(100*res.Options.Delta), trimPct(100*res.Options.PCS), res.Rounds)
}

// servedText is the level's selected configuration, with the live ones
// within the indifference zone of it, which are as good.
func servedText(l selection.LevelResult) string {
	if l.Selected == "" {
		return "–"
	}
	s := l.Selected
	var near []string
	for _, n := range l.Near {
		if n != l.Selected {
			near = append(near, n)
		}
	}
	if len(near) > 0 {
		s += " (as good: " + strings.Join(near, ", ") + ")"
	}
	return s
}

// advantageText is the selected's lead over the runner-up on the
// confirmation round, with its interval; the race's own lead, marked as
// inflated by the selection, when no confirmation ran.
func advantageText(l selection.LevelResult) string {
	switch {
	case l.Advantage != nil:
		return fmt.Sprintf("%s [%s, %s]", verdict.Pct(l.Advantage.Pct), verdict.Pct(l.Advantage.LoPct), verdict.Pct(l.Advantage.HiPct))
	case l.RunnerUp != "":
		return verdict.Pct(l.RaceGapPct) + " in the race (not confirmed; biased up)"
	}
	return "–"
}

// decidedText is when the level's race ended, or why it has not.
func decidedText(res *selection.Result, l selection.LevelResult) string {
	switch {
	case l.Truncated:
		return "cut at round " + strconv.Itoa(l.DecidedAfter) + " (best of " + strconv.Itoa(len(l.Live)) + " left)"
	case l.DecidedAfter > 0:
		return "after round " + strconv.Itoa(l.DecidedAfter)
	case !res.Done:
		return "open (" + strconv.Itoa(len(l.Live)) + " left)"
	}
	return "–"
}

// policyLines are the serving policy in words: the load bands in which one
// configuration is best ("serve A up to C=4, B from C=16"), what serving
// the best of each band is worth against the best single configuration
// (the envelope), on the confirmation round when it ran, the policy as one
// engine setting or why it is not one, and, in a race that checks a
// written policy, whether it delivered the best at every level.
func policyLines(v *verdict.Verdict) []string {
	res := v.Selection
	bands := policy.Bands(res)
	if len(bands) == 0 {
		return nil
	}
	out := []string{policy.Sentence(bands)}
	if e := res.Envelope; e != nil && len(bands) > 1 {
		s := fmt.Sprintf("Serving the best of each band beats the best single configuration, %s, by ", e.Single)
		if e.Confirmed != nil {
			s += fmt.Sprintf("%s [%s, %s] on the confirmation round.", verdict.Pct(e.Confirmed.Pct), verdict.Pct(e.Confirmed.LoPct), verdict.Pct(e.Confirmed.HiPct))
		} else {
			s += verdict.Pct(e.RacePct) + " in the race (not confirmed; biased up)."
		}
		out = append(out, s)
	}
	out = append(out, settingLines(v.Policy, bands)...)
	if c := v.PolicyCheck; c != nil {
		out = append(out, c.Sentence())
	}
	return out
}

// settingLines say the policy as one engine setting, where the run's
// folder holds it and how to check it, or why it is not one.
func settingLines(w *policy.Written, bands []policy.Band) []string {
	switch {
	case w == nil:
		return nil
	case w.Setting == nil:
		return []string{"Not one engine setting: " + w.Why + "."}
	}
	s := w.Setting
	unit := "steps"
	if s.Engine == engine.VLLM {
		unit = "tokens"
	}
	var steps []string
	for _, b := range s.Bands {
		steps = append(steps, fmt.Sprintf("%d %s from a batch of %d", b.Steps, unit, b.Batch))
	}
	files := PolicyDir + "/" + PolicyScenarioFile
	if s.ConfigFile != "" {
		files += " and " + PolicyDir + "/" + s.ConfigFile
	}
	out := []string{fmt.Sprintf("As one server: %s, %s (%s in the run's folder). To check it, race %s against %s (question: select).",
		s.Source, strings.Join(steps, ", "), files, PolicyDir+"/"+PolicyScenarioFile, strings.Join(policy.Fixed(bands), " and "))}
	return append(out, s.Notes...)
}

// The run's folder for a written policy: its scenario file, and beside it
// the setting's own file (Setting.ConfigFile).
const (
	PolicyDir          = "serving-policy"
	PolicyScenarioFile = "policy.yaml"
)

// raceLines draw the race: a row per configuration, a column per round,
// ■ where it was launched in the race, c in a confirmation round, then
// when it left and behind whom.
func raceLines(res *selection.Result, rounds int) []string {
	names := raceNames(res)
	wide := 0
	for _, n := range names {
		wide = max(wide, len([]rune(n)))
	}
	confirmed := res.Done && rounds > res.Rounds
	var out []string
	for _, n := range names {
		var b strings.Builder
		b.WriteString(n + strings.Repeat(" ", wide-len([]rune(n))) + "  ")
		last := 0
		for _, lk := range res.Looks {
			if slices.Contains(lk.Launched, n) {
				b.WriteString("■")
				last = lk.Round
			} else {
				b.WriteString(" ")
			}
		}
		if confirmed && slices.Contains(res.Confirm, n) {
			b.WriteString("c")
		} else if confirmed {
			b.WriteString(" ")
		}
		if why := leftWhy(res, n, last); why != "" {
			b.WriteString("  " + why)
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// leftWhy is "left after round 3: behind B by 6.1% at C=1; behind A by
// 3.0% at C=4" for a configuration out of the race at every level it could
// win, or withdrawn; empty for one still live somewhere.
func leftWhy(res *selection.Result, name string, last int) string {
	if slices.Contains(res.Next, name) {
		return ""
	}
	why, levels := res.Why(name, last)
	if levels < len(res.Levels) {
		return ""
	}
	return "left after round " + strconv.Itoa(last) + ": " + why
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// selectionHTML is the page's section of a selection campaign's race, after
// the metrics' as in the text report: the policy table, the policy in
// words, and when each configuration left; none for a comparison.
func selectionHTML(v *verdict.Verdict) []hMetric {
	res := v.Selection
	if res == nil {
		return nil
	}
	st := selectionTable(res)
	t := hTable{ID: "selection-table", Caption: "the configuration to serve at each level"}
	for _, h := range st.Header {
		t.Head = append(t.Head, hCell{Parts: []hPart{txt(h)}})
	}
	for _, row := range st.Rows {
		r := hRow{}
		for i, cell := range row {
			class := ""
			if i == 0 {
				class = "level"
			}
			r.Cells = append(r.Cells, hCell{Class: class, Parts: []hPart{txt(cell)}})
		}
		t.Rows = append(t.Rows, r)
	}
	lines := policyLines(v)
	for _, n := range raceNames(res) {
		if why := leftWhy(res, n, lastLaunched(res, n)); why != "" {
			lines = append(lines, n+" "+why)
		}
	}
	return []hMetric{{ID: "selection", Title: "The best configuration per level", Intro: strings.TrimSuffix(selectionHeading(res), ":") + ".", Table: t, Lines: lines}}
}

// raceNames are the race's configurations in the order first launched.
func raceNames(res *selection.Result) []string {
	var names []string
	for _, lk := range res.Looks {
		for _, n := range lk.Launched {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// lastLaunched is the last round of the race that launched name.
func lastLaunched(res *selection.Result, name string) int {
	last := 0
	for _, lk := range res.Looks {
		if slices.Contains(lk.Launched, name) {
			last = lk.Round
		}
	}
	return last
}
