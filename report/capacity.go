package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// CapacityFile is the CSV of goodput and capacity WriteAll writes when the
// campaign has a service-level objective.
const CapacityFile = "capacity.csv"

// capacityHeading introduces the capacity sentences.
func capacityHeading(v *verdict.Verdict) string {
	return fmt.Sprintf("Capacity under the SLO (%s): the highest load meeting it, interpolated between levels, geometric mean over launches [%.0f%% CI]",
		v.Capacity.Objective, 100*v.Confidence)
}

// capacityLines are the verdict's capacity sentences, one per variant,
// then, with one launch per scenario, what that leaves unmeasured.
func capacityLines(v *verdict.Verdict) []string {
	cv := v.Capacity
	if cv == nil {
		return nil
	}
	var out []string
	for _, c := range cv.Comparisons {
		out = append(out, c.Sentence)
	}
	if len(cv.Comparisons) == 0 {
		for _, s := range cv.Scenarios {
			out = append(out, fmt.Sprintf("under %s, %s serves %s %s", cv.Objective, s.Scenario, s.Text, cv.Unit))
		}
	}
	if v.Rounds <= 1 {
		out = append(out, "one launch per scenario: launch-to-launch variation of the capacity is not measured, so it has no interval and no winner")
	}
	return out
}

// sloLine is a level's figures against the objective, to follow its detail
// line; empty without an objective.
func sloLine(l verdict.Level) string {
	if l.SLO == nil {
		return ""
	}
	line := fmt.Sprintf("        SLO met in %d of %d launches | goodput %.3g req/s", l.SLO.Meets, len(l.SLO.Launches), l.SLO.Goodput)
	if l.Saturated {
		line += " (saturated: misses the SLO)"
	}
	return line
}

// CapacityHeader is the fixed column order of CapacityCSV.
var CapacityHeader = []string{"scenario", "level", "load", "unit", "goodput_req_s", "launches_meeting", "launches",
	"capacity", "capacity_lo", "capacity_hi", "capacity_bound", "delta_pct", "p_adjusted", "outcome", "winner"}

// CapacityCSV writes one row per scenario and level: the level's goodput
// and how many launches met the objective there, then the scenario's
// capacity and, for a variant, its comparison with the baseline's
// (repeated on each of its rows, so that one file holds both).
func CapacityCSV(w io.Writer, v *verdict.Verdict) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CapacityHeader); err != nil {
		return fmt.Errorf("writing capacity CSV: %w", err)
	}
	cv := v.Capacity
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, s := range v.Scenarios {
		var capc []string
		for _, sc := range cv.Scenarios {
			if sc.Scenario == s.Name {
				capc = []string{f(sc.Capacity.Center), f(sc.Capacity.Lo), f(sc.Capacity.Hi), string(sc.Bound)}
			}
		}
		if capc == nil {
			capc = []string{"", "", "", ""}
		}
		cmp := []string{"", "", "", ""}
		for _, c := range cv.Comparisons {
			if c.Variant == s.Name {
				cmp = []string{f(c.DeltaPct), f(c.PAdjusted), c.Outcome, c.Winner}
			}
		}
		for _, l := range s.Levels {
			if l.SLO == nil {
				continue
			}
			rec := append([]string{s.Name, strconv.FormatInt(l.Level.Key(), 10), f(measure.LevelValue(l.Level)), cv.Unit,
				f(l.SLO.Goodput), strconv.Itoa(l.SLO.Meets), strconv.Itoa(len(l.SLO.Launches))}, capc...)
			if err := cw.Write(append(rec, cmp...)); err != nil {
				return fmt.Errorf("writing capacity CSV: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing capacity CSV: %w", err)
	}
	return nil
}

// sloTable is a scenario's levels against the objective, for Markdown.
func sloTable(s verdict.Scenario) table {
	t := table{Header: []string{"level", "launches meeting the SLO", "goodput req/s"}}
	for _, l := range s.Levels {
		if l.SLO == nil {
			continue
		}
		t.Rows = append(t.Rows, []string{measure.LevelLabel(l.Level), fmt.Sprintf("%d/%d", l.SLO.Meets, len(l.SLO.Launches)),
			fmt.Sprintf("%.3g", l.SLO.Goodput)})
	}
	return t
}

// capacityDiffText writes the capacity part of a diff: a table of each
// scenario's capacity in both runs, or why there is none.
func capacityDiffText(w io.Writer, d *verdict.DiffResult) error {
	c := d.Capacity
	if c == nil {
		return nil
	}
	if c.Note != "" {
		_, err := fmt.Fprintf(w, "! %s\n", c.Note)
		return err
	}
	fmt.Fprintf(w, "\nCapacity under the SLO (%s), %s:\n", c.Objective, c.Unit)
	t := table{Header: []string{"scenario", "old", "new", "delta", "outcome"}}
	for _, r := range c.Rows {
		outcome, decided := diffOutcome(r.Regression, r.Improvement, r.Outcome)
		switch {
		case decided:
		case r.Censored:
			outcome = "inconclusive (a capacity beyond the levels measured is only a bound)"
		case r.Method == verdict.MethodWithinLaunch:
			outcome = "inconclusive (one launch in each run)"
		default:
			outcome = "inconclusive (" + r.MDEClause() + ")"
		}
		t.Rows = append(t.Rows, []string{r.Scenario, r.Old, r.New,
			verdict.Pct(r.DeltaPct) + " (" + verdict.PClause(r.PAdjusted) + ")", outcome})
	}
	return renderTable(w, t, nil)
}
