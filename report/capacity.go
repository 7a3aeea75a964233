package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// CapacityFile is the CSV of goodput and capacity WriteAll writes when the
// campaign has a service-level objective.
const CapacityFile = "capacity.csv"

// capacityHeading introduces the capacity sentences.
func capacityHeading(v *verdict.Verdict) string {
	h := fmt.Sprintf("Capacity under the SLO (%s): the highest load meeting it, interpolated between levels, geometric mean over launches [%.0f%% CI]",
		v.Capacity.Objective, 100*v.Confidence)
	if v.Capacity.PerGPU {
		h += "; the scenarios hold different numbers of GPUs, so each capacity has its share of one GPU beside it, and each change and winner is of the whole capacity, the load the deployment sustains"
	}
	return h
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
			line := fmt.Sprintf("under %s, %s serves %s %s", cv.Objective, s.Scenario, s.Text, cv.Unit)
			if cv.PerGPU && s.PerGPUText != "" {
				line += " (" + verdict.PerGPUAside(&s) + ")"
			}
			out = append(out, line)
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
	if l.SLO.GoodputPerGPU > 0 {
		line += fmt.Sprintf(" (%.3g/GPU)", l.SLO.GoodputPerGPU)
	}
	if l.Saturated {
		line += " (saturated: misses the SLO)"
	}
	return line
}

// CapacityHeader is the fixed column order of CapacityCSV. The per-GPU
// columns come last, so that the columns before them keep their places.
var CapacityHeader = []string{"scenario", "level", "load", "unit", "goodput_req_s", "launches_meeting", "launches",
	"capacity", "capacity_lo", "capacity_hi", "capacity_bound", "delta_pct", "p_adjusted", "outcome", "winner",
	"gpus", "goodput_per_gpu_req_s", "capacity_per_gpu", "capacity_per_gpu_lo", "capacity_per_gpu_hi"}

// CapacityCSV writes one row per scenario and level: the level's goodput
// and how many launches met the objective there, then the scenario's
// capacity and, for a variant, its comparison with the baseline's
// (repeated on each of its rows, so that one file holds both), then the
// scenario's GPUs with the goodput and the capacity per GPU (empty when
// its GPUs are not known).
func CapacityCSV(w io.Writer, v *verdict.Verdict) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CapacityHeader); err != nil {
		return fmt.Errorf("writing capacity CSV: %w", err)
	}
	cv := v.Capacity
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, s := range v.Scenarios {
		var capc []string
		perGPU := []string{"", ""}
		for _, sc := range cv.Scenarios {
			if sc.Scenario == s.Name {
				capc = []string{f(sc.Capacity.Center), f(sc.Capacity.Lo), f(sc.Capacity.Hi), string(sc.Bound)}
				if sc.PerGPU != nil {
					perGPU = []string{f(sc.PerGPU.Center), f(sc.PerGPU.Lo), f(sc.PerGPU.Hi)}
				}
			}
		}
		gpus := ""
		if s.GPUs > 0 {
			gpus = strconv.Itoa(s.GPUs)
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
			rec = append(rec, cmp...)
			goodput := ""
			if gpus != "" {
				goodput = f(l.SLO.GoodputPerGPU)
			}
			rec = append(rec, gpus, goodput)
			if err := cw.Write(append(rec, perGPU...)); err != nil {
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

// sloTable is a scenario's levels against the objective, for the page,
// with the goodput per GPU when the scenario's GPUs are known.
func sloTable(s verdict.Scenario) table {
	t := table{Header: []string{"level", "launches meeting the SLO", "goodput req/s"}}
	if s.GPUs > 0 {
		t.Header = append(t.Header, "goodput req/s per GPU")
	}
	for _, l := range s.Levels {
		if l.SLO == nil {
			continue
		}
		row := []string{measure.LevelLabel(l.Level), fmt.Sprintf("%d/%d", l.SLO.Meets, len(l.SLO.Launches)),
			fmt.Sprintf("%.3g", l.SLO.Goodput)}
		if s.GPUs > 0 {
			row = append(row, fmt.Sprintf("%.3g", l.SLO.GoodputPerGPU))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// capacityDiffText writes the capacity part of a diff: a table of each
// scenario's capacity in both runs, or why there is none.
func capacityDiffText(w io.Writer, d *rundiff.Result) error {
	c := d.Capacity
	if c == nil {
		return nil
	}
	if c.Note != "" {
		_, err := fmt.Fprintf(w, "! %s\n", c.Note)
		return err
	}
	fmt.Fprintf(w, "\nCapacity under the SLO (%s), %s:\n", c.Objective, c.Unit)
	for _, r := range c.Rows {
		if r.PerGPU {
			fmt.Fprintln(w, "per GPU: a scenario whose GPUs differ between the runs has its capacity per GPU beside it, and its change is of the capacity per GPU")
			break
		}
	}
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
		old, new := r.Old, r.New
		if r.PerGPU {
			old, new = old+" ("+r.OldPerGPU+")", new+" ("+r.NewPerGPU+")"
		}
		per := ""
		if r.PerGPU {
			per = " per GPU"
		}
		delta := verdict.Pct(r.DeltaPct) + per + " (" + verdict.PClause(r.PAdjusted) + ")"
		if r.Unjudged {
			delta, outcome = verdict.Pct(r.DeltaPct)+per, "not judged: run effect unknown"
		}
		t.Rows = append(t.Rows, []string{r.Scenario, old, new, delta, outcome})
	}
	return renderTable(w, t, nil)
}
