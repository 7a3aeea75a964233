package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// DiffText writes the comparison of two runs: a table per scenario and level
// with old and new throughput, the delta, its p-value and the outcome, then
// what only one run has.
func DiffText(w io.Writer, d *rundiff.Result) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "old: %s (%s)\nnew: %s (%s)\n", d.OldRun, roundsWords(d.OldRounds), d.NewRun, roundsWords(d.NewRounds))
	fmt.Fprintf(ew, "regression: significantly slower (p < %v after %s over %s) and by more than %.1f%%; tie: the %.0f%% interval within ±%.1f%%\n",
		d.Alpha, correctionName(d.Correction), plural(d.Comparisons(), "comparison", "comparisons"), 100*d.Threshold, 100*(1-2*d.Alpha), d.EquivalenceMarginPct)
	if d.OldRounds <= 1 && d.NewRounds <= 1 {
		fmt.Fprintf(ew, "! launch-to-launch variation not measured (one launch per scenario in each run): a difference under %.1f%% (min_effect) is never called a regression\n",
			d.MinEffectPct)
	}
	if d.Forced {
		fmt.Fprintln(ew, "!! the sweeps differ (compared because of --force):")
		for _, f := range d.FingerprintFields {
			fmt.Fprintf(ew, "   %s\n", f)
		}
	}
	if len(d.Engines) > 0 {
		fmt.Fprintln(ew, "! the runs used different engine builds (their --help differs), so a difference may be the engine's:")
		for _, e := range d.Engines {
			fmt.Fprintf(ew, "   %s\n", e)
		}
	}
	for _, side := range []struct {
		name  string
		notes []verdict.Note
	}{{"OLD", d.OldNotes}, {"NEW", d.NewNotes}} {
		for _, n := range side.notes {
			mark := "!"
			if n.Severity == verdict.SeverityRed {
				mark = "!!"
			}
			fmt.Fprintf(ew, "%s %s: %s\n", mark, side.name, n.Text)
		}
	}
	if len(d.HostFacts) > 0 {
		fmt.Fprintf(ew, "! the runs' hosts differ: %s: a difference may be the machine's\n", strings.Join(d.HostFacts, "; "))
	}
	if d.HostLoad != "" {
		fmt.Fprintf(ew, "! %s: a difference may be the host's\n", d.HostLoad)
	}
	for _, g := range d.HostGPUs {
		fmt.Fprintf(ew, "! %s: a difference may be the GPUs'\n", g)
	}
	fmt.Fprintln(ew, runEffectLine(d))
	for _, s := range d.HistorySkipped {
		fmt.Fprintf(ew, "   not in the history: %s\n", s)
	}
	fmt.Fprintln(ew)
	if line := d.PerGPULine(); line != "" {
		fmt.Fprintln(ew, line)
	}
	t := table{Header: []string{"scenario", "C", "old tok/s", "new tok/s", "delta", "outcome"}}
	if len(d.Rows) > 0 {
		t.Header[1] = measure.LevelAxis(d.Rows[0].Level)
	}
	for _, r := range d.Rows {
		delta := verdict.Pct(r.DeltaPct) + " (" + verdict.PClause(r.PAdjusted) + ")"
		if r.PerGPU {
			delta = verdict.Pct(r.DeltaPct) + " per GPU (" + verdict.PClause(r.PAdjusted) + ")"
		}
		outcome, decided := diffOutcome(r.Regression, r.Improvement, r.Outcome)
		plainDelta := verdict.Pct(r.DeltaPct)
		if r.PerGPU {
			plainDelta += " per GPU"
		}
		switch {
		case len(r.DoubtedIn) > 0:
			delta, outcome = plainDelta, doubtedIn(r.Doubts, r.DoubtedIn)
		case r.Unjudged:
			delta, outcome = plainDelta, "not judged: run effect unknown"
		case decided:
		case r.BelowMinEffect:
			outcome = "inconclusive (under min_effect)"
		default:
			outcome = "inconclusive (" + r.MDEClause() + ")"
		}
		t.Rows = append(t.Rows, []string{r.Scenario, measure.LevelLabel(r.Level),
			estimate(r.Old) + diffPerGPU(r.OldPerGPU),
			estimate(r.New) + diffPerGPU(r.NewPerGPU), delta, outcome})
	}
	if err := renderTable(ew, t, nil); err != nil {
		return err
	}
	for _, u := range d.Unmatched {
		fmt.Fprintf(ew, "! %s\n", u)
	}
	if err := ratiosText(ew, d); err != nil {
		return err
	}
	if err := capacityDiffText(ew, d); err != nil {
		return err
	}
	if err := diffWhyText(ew, d); err != nil {
		return err
	}
	if err := turnsDiffText(ew, d); err != nil {
		return err
	}
	fmt.Fprintln(ew)
	fmt.Fprintln(ew, judgedLine(d))
	return ew.err
}

// runEffectLine says what the diff knows of the run effect: its size and
// the history it was learned from, or that absolute changes are not judged
// for want of history.
func runEffectLine(d *rundiff.Result) string {
	e := d.RunEffect
	if e.Enough() {
		return fmt.Sprintf("run effect: ±%.1f%% (sd) from run to run, learned from %d runs of this campaign, sweep and host; absolute changes are judged with it",
			e.SDPct, len(e.Runs))
	}
	have := 0
	if e != nil {
		have = len(e.Runs)
	}
	return fmt.Sprintf("run effect unknown: %s of this campaign, sweep and host (%d needed): a run's absolute figures cannot be told from its night's luck, so they are shown, not judged; each variant's ratio to its own run's baseline, which the run effect cancels, is",
		plural(have, "run of history", "runs of history"), rundiff.MinHistory)
}

// ratiosText writes each variant's ratio to the baseline in both runs and
// its change.
func ratiosText(ew *errWriter, d *rundiff.Result) error {
	if len(d.Ratios) == 0 {
		return nil
	}
	fmt.Fprintln(ew, "\nagainst the baseline, run by run (the run effect cancels in each ratio):")
	t := table{Header: []string{"variant", "C", "old vs baseline", "new vs baseline", "change", "outcome"}}
	t.Header[1] = measure.LevelAxis(d.Ratios[0].Level)
	for _, r := range d.Ratios {
		outcome, decided := diffOutcome(r.Regression, r.Improvement, r.Outcome)
		change := verdict.Pct(r.DeltaPct) + " (" + verdict.PClause(r.PAdjusted) + ")"
		switch {
		case len(r.DoubtedIn) > 0:
			outcome, change = doubtedIn(r.Doubts, r.DoubtedIn), verdict.Pct(r.DeltaPct)
		case !decided:
			outcome = "no change seen (" + r.MDEClause() + ")"
		}
		t.Rows = append(t.Rows, []string{r.Variant + " vs " + r.Baseline, measure.LevelLabel(r.Level),
			verdict.Pct(r.OldPct), verdict.Pct(r.NewPct), change, outcome})
	}
	return renderTable(ew, t, nil)
}

// judgedLine is the diff's last line: what it judged and found.
func judgedLine(d *rundiff.Result) string {
	var regs []string
	for _, r := range d.Rows {
		if r.Regression {
			regs = append(regs, fmt.Sprintf("%s %s %s", r.Scenario, measure.LevelName(r.Level), verdict.Pct(r.DeltaPct)))
		}
	}
	for _, r := range d.Ratios {
		if r.Regression {
			regs = append(regs, fmt.Sprintf("%s vs %s %s %s", r.Variant, r.Baseline, measure.LevelName(r.Level), verdict.Pct(r.DeltaPct)))
		}
	}
	if d.Capacity != nil {
		for _, r := range d.Capacity.Rows {
			if r.Regression {
				regs = append(regs, fmt.Sprintf("%s capacity %s", r.Scenario, verdict.Pct(r.DeltaPct)))
			}
		}
	}
	doubts := doubtedRows(d)
	if len(regs) > 0 {
		return fmt.Sprintf("REGRESSED: %s beyond %.0f%%: %s", plural(len(regs), "regression", "regressions"), 100*d.Threshold, strings.Join(regs, "; ")) + doubts
	}
	unjudged := 0
	var worst *rundiff.Row
	for i, r := range d.Rows {
		if !r.Unjudged {
			continue
		}
		unjudged++
		if r.DeltaPct <= -100*d.Threshold && (worst == nil || r.DeltaPct < worst.DeltaPct) {
			worst = &d.Rows[i]
		}
	}
	line := fmt.Sprintf("no regression beyond %.0f%% in %s", 100*d.Threshold, plural(d.Comparisons(), "judged comparison", "judged comparisons"))
	if d.Comparisons() == 0 {
		line = "nothing judged: no regression can be named"
	}
	switch {
	case worst != nil:
		// Never a silent pass: a fall of a run's own figures beyond the
		// threshold is named, with what it would take to judge it.
		line += fmt.Sprintf("; but %s %s fell %s, which cannot be separated from the run effect without %d runs of history (have %d): rerun the campaign, or diff against a folder of its runs with --history",
			worst.Scenario, measure.LevelName(worst.Level), verdict.Pct(worst.DeltaPct), rundiff.MinHistory, historyRuns(d))
	case unjudged > 0:
		line += fmt.Sprintf("; %s of absolute figures not judged: the run effect needs %d runs of history", plural(unjudged, "row", "rows"), rundiff.MinHistory)
	}
	return line + doubts
}

// doubtedIn is a doubted row's outcome: "doubted: host disturbed in NEW".
func doubtedIn(ds []verdict.Doubt, in []string) string {
	var words []string
	for _, k := range verdict.DoubtKinds(ds) {
		words = append(words, verdict.DoubtWords(k))
	}
	return "doubted: " + strings.Join(words, ", ") + " in " + strings.Join(in, " and ")
}

// doubtedRows is the last line's clause on the rows a run's own doubts
// kept out of the judgement ("; 4 rows doubted: host disturbed in NEW (its
// notes above say what to rerun)"), empty when none was: a gate that
// passed because its rows were doubted says so.
func doubtedRows(d *rundiff.Result) string {
	n := 0
	seen := map[string]bool{}
	var why []string
	add := func(ds []verdict.Doubt, in []string) {
		n++
		if w := strings.TrimPrefix(doubtedIn(ds, in), "doubted: "); !seen[w] {
			seen[w] = true
			why = append(why, w)
		}
	}
	for _, r := range d.Rows {
		if len(r.DoubtedIn) > 0 {
			add(r.Doubts, r.DoubtedIn)
		}
	}
	for _, r := range d.Ratios {
		if len(r.DoubtedIn) > 0 {
			add(r.Doubts, r.DoubtedIn)
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %s doubted, not judged: %s (the runs' notes above say what to rerun)", plural(n, "row", "rows"), strings.Join(why, "; "))
}

// historyRuns is how many runs of history the diff had.
func historyRuns(d *rundiff.Result) int {
	if d.RunEffect == nil {
		return 0
	}
	return len(d.RunEffect.Runs)
}

// plural is "1 run" or "3 runs".
func plural(n int, one, many string) string {
	if n == 0 {
		return "no " + many
	}
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// diffPerGPU is " (127.1/GPU)" after a throughput of a diff's row compared
// per GPU; empty for a row compared whole.
func diffPerGPU(e *verdict.Estimate) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf(" (%s/GPU)", strconv.FormatFloat(e.Center, 'f', perGPUDigits, 64))
}

// roundsWords is "5 rounds" or "1 round".
func roundsWords(n int) string {
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// correctionName names a multiple-testing correction in prose.
func correctionName(c string) string {
	switch c {
	case rule.CorrectionHolm:
		return "Holm's correction"
	case rule.CorrectionBH:
		return "the Benjamini–Hochberg correction"
	}
	return "no correction"
}

// diffOutcome is the word for a compared row of a diff, levels and
// capacities alike, when the comparison decided something: a regression or
// improvement beyond the threshold, a significant change within it, or a
// tie. decided is false for an inconclusive row, whose reason the caller
// knows.
func diffOutcome(regression, improvement bool, outcome string) (word string, decided bool) {
	switch {
	case regression:
		return "REGRESSION", true
	case improvement:
		return "improved", true
	case outcome == verdict.OutcomeSlower || outcome == verdict.OutcomeFaster:
		return outcome + ", within threshold", true
	case outcome == verdict.OutcomeTie:
		return "tie", true
	}
	return "", false
}
