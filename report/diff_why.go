package report

import (
	"fmt"
	"io"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// diffWhyText writes what explains a diff's throughput: the accept length
// per level in both runs with their intervals, flagged where the change lies
// beyond both, and the servers' running batch and generation throughput
// over the steady windows. Nothing when neither run has them.
func diffWhyText(w io.Writer, d *rundiff.Result) error {
	if len(d.Accept) > 0 {
		fmt.Fprintf(w, "\nAccept length (tokens per target step; ! where it changed: Welch's t on the launches, Holm over these %d rows, p < %v):\n", len(d.Accept), d.Alpha)
		t := table{Header: []string{"scenario", measure.LevelAxis(d.Accept[0].Level), "old", "new", "delta", ""}}
		sources := map[string]bool{}
		var srcs []string
		for _, r := range d.Accept {
			flag := ""
			if r.Changed {
				flag = "!"
			}
			t.Rows = append(t.Rows, []string{r.Scenario, measure.LevelLabel(r.Level), acceptInterval(r.Old), acceptInterval(r.New), verdict.Pct(r.DeltaPct), flag})
			for _, s := range []string{r.OldSource, r.NewSource} {
				if s != "" && !sources[s] {
					sources[s] = true
					srcs = append(srcs, s)
				}
			}
		}
		if err := renderTable(w, t, nil); err != nil {
			return err
		}
		for _, s := range srcs {
			fmt.Fprintf(w, "  source: %s\n", s)
		}
	}
	if len(d.Server) > 0 {
		fmt.Fprintln(w, "\nThe servers' own metrics over the steady windows (mean of the launches):")
		t := table{Header: []string{"scenario", measure.LevelAxis(d.Server[0].Level), "old batch", "new batch", "old gen tok/s", "new gen tok/s", "delta"}}
		for _, r := range d.Server {
			delta := "-"
			if r.OldGenTokS != nil && r.NewGenTokS != nil && *r.OldGenTokS > 0 {
				delta = verdict.Pct(100 * (*r.NewGenTokS / *r.OldGenTokS - 1))
			}
			t.Rows = append(t.Rows, []string{r.Scenario, measure.LevelLabel(r.Level),
				optional(r.OldRunning, 1), optional(r.NewRunning, 1), optional(r.OldGenTokS, 1), optional(r.NewGenTokS, 1), delta})
		}
		if err := renderTable(w, t, nil); err != nil {
			return err
		}
	}
	return nil
}

// acceptInterval is "2.47 [2.41, 2.55]", or the figure alone from one launch.
func acceptInterval(e verdict.Estimate) string {
	if e.N < 2 {
		return fmt.Sprintf("%.2f", e.Center)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", e.Center, e.Lo, e.Hi)
}

// optional is x with digits decimals, "-" when absent.
func optional(x *float64, digits int) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.*f", digits, *x)
}
