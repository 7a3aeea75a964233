package report

import (
	"fmt"
	"io"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// turnsDiffText writes each turn's TTFT p50 of multi-turn sessions in both
// runs, and the prefix cache's share where the server said: descriptive,
// and the heading says so, since no test decides these rows.
func turnsDiffText(w io.Writer, d *rundiff.Result) error {
	if len(d.Turns) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nTTFT p50 by turn of the sessions (descriptive: not tested, not part of the regression decision):")
	t := table{Header: []string{"scenario", measure.LevelAxis(d.Turns[0].Level), "turn", "old", "new", "change", "cached old → new"}}
	for _, r := range d.Turns {
		t.Rows = append(t.Rows, []string{r.Scenario, measure.LevelLabel(r.Level), fmt.Sprint(r.Turn), ms(r.OldTTFT), ms(r.NewTTFT),
			verdict.Pct(r.ChangePct), share(r.OldCached) + " → " + share(r.NewCached)})
	}
	return renderTable(w, t, nil)
}

// share writes a fraction as a whole percentage, "-" when unknown.
func share(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *x*100)
}
