package report

import (
	"fmt"
	"io"
	"strconv"

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
	fmt.Fprintf(ew, "regression: significantly slower (p < %v after %s over %d comparisons) and by more than %.1f%%; tie: the %.0f%% interval within ±%.1f%%\n",
		d.Alpha, correctionName(d.Correction), d.Comparisons(), 100*d.Threshold, 100*(1-2*d.Alpha), d.EquivalenceMarginPct)
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
		switch {
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
	if err := capacityDiffText(ew, d); err != nil {
		return err
	}
	if err := diffWhyText(ew, d); err != nil {
		return err
	}
	if err := turnsDiffText(ew, d); err != nil {
		return err
	}
	if d.Regressed() {
		fmt.Fprintln(ew, "\nREGRESSED")
	} else {
		fmt.Fprintln(ew, "\nno significant regression")
	}
	return ew.err
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
