package report

import (
	"fmt"
	"io"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// DiffText writes the comparison of two runs: a table per scenario and level
// with old and new throughput, the delta, its p-value and the outcome, then
// what only one run has.
func DiffText(w io.Writer, d *DiffResult) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "old: %s\nnew: %s\nregression: a significant (p < %v) slowdown beyond %.1f%%\n",
		d.OldRun, d.NewRun, d.Alpha, 100*d.Threshold)
	if d.Forced {
		fmt.Fprintln(ew, "!! the sweeps differ (compared because of --force):")
		for _, f := range d.FingerprintFields {
			fmt.Fprintf(ew, "   %s\n", f)
		}
	}
	fmt.Fprintln(ew)
	t := table{Header: []string{"scenario", "C", "old tok/s", "new tok/s", "delta", "outcome"}}
	for _, r := range d.Rows {
		delta := "~"
		if r.Significant {
			delta = verdict.Pct(r.DeltaPct)
		}
		delta += " (" + verdict.PClause(r.P) + ")"
		outcome := "~"
		switch {
		case r.Regression:
			outcome = "REGRESSION"
		case r.Improvement:
			outcome = "improved"
		case r.Significant:
			outcome = "within threshold"
		case r.Hopeless:
			outcome = "~ (too few samples)"
		}
		t.Rows = append(t.Rows, []string{r.Scenario, fmt.Sprint(r.Level),
			estimate(r.Old),
			estimate(r.New), delta, outcome})
	}
	if err := renderTable(ew, t, nil); err != nil {
		return err
	}
	for _, u := range d.Unmatched {
		fmt.Fprintf(ew, "! %s\n", u)
	}
	if d.Regressed() {
		fmt.Fprintln(ew, "\nREGRESSED")
	} else {
		fmt.Fprintln(ew, "\nno significant regression")
	}
	return ew.err
}
