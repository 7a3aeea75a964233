package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// CSVHeader is the column order of CSV for a run at the default
// percentiles (CSVHeaderAt).
var CSVHeader = CSVHeaderAt(measure.DefaultPercentiles)

// csvComparison and csvAttempt name the columns after the per-level figures.
var (
	csvComparison = []string{"delta_pct", "speedup_lo", "speedup_hi", "p", "p_adjusted", "significant", "outcome", "mde_pct", "method", "winner"}
	csvAttempt    = []string{"attempt", "newest_attempt", "newest_status"}
	// csvPareto are the scenario's GPUs, the level's throughput per GPU and
	// tokens per second per user, and whether it is Pareto-optimal
	// (perGPUCSV).
	csvPareto = []string{"gpus", "throughput_per_gpu_tok_s", "tok_s_per_user", "pareto_optimal"}
)

// CSVHeaderAt is the column order of CSV for a run whose latencies are at
// the percentiles ps: the scenario and level, the per-level figures
// (levelColumnsAt), the comparison with the baseline and the attempt the
// figures come from.
func CSVHeaderAt(ps []float64) []string {
	h := []string{"scenario", "level"}
	for _, f := range csvFigures(ps) {
		h = append(h, f.CSV)
	}
	h = append(h, csvComparison...)
	h = append(h, csvAttempt...)
	return append(h, csvPareto...)
}

// CSV writes one row per scenario and level, in campaign then level order.
// A figure the level lacks (energy without power readings) is an empty cell.
// The comparison columns (delta_pct to method) are the scenario against the
// baseline, empty for the baseline itself; outcome is faster, slower, tie or
// inconclusive, p_adjusted the corrected p-value that decides it.
// Floats are written in full precision so the file reads back exactly.
// attempt is the attempt the figures come from; newest_attempt and
// newest_status are filled only when a newer attempt did not complete, so a
// spreadsheet cannot pass off a rerun's failure as its figures. The last
// four columns place the level on the Pareto plane (paretoCSV).
func CSV(w io.Writer, v *verdict.Verdict) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeaderAt(v.Percentiles)); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	figures := csvFigures(v.Percentiles)
	for _, row := range v.Rows {
		for i, s := range v.Scenarios {
			l := s.Level(row.Level)
			if l == nil {
				continue
			}
			rec := []string{s.Name, strconv.FormatFloat(measure.LevelValue(l.Level), 'f', -1, 64)}
			for _, fg := range figures {
				if fg.Str != nil {
					rec = append(rec, fg.Str(l))
					continue
				}
				x, ok := fg.Of(l)
				if !ok {
					rec = append(rec, "")
					continue
				}
				rec = append(rec, f(x))
			}
			c := row.Cells[i]
			cmp := make([]string, len(csvComparison))
			if c.Compared {
				cmp = []string{f(c.DeltaPct), f(c.SpeedupLo), f(c.SpeedupHi), f(c.P), f(c.PAdjusted),
					strconv.FormatBool(c.Significant), c.Outcome, f(c.MDEPct), c.Method, ""}
			}
			cmp[len(cmp)-1] = strconv.FormatBool(row.Winner == s.Name)
			attempt, newest, newestStatus := "", "", ""
			if s.Attempt > 0 {
				attempt = strconv.Itoa(s.Attempt)
			}
			if s.Newest != nil {
				newest, newestStatus = strconv.Itoa(s.Newest.Attempt), s.Newest.Status
			}
			rec = append(append(rec, cmp...), attempt, newest, newestStatus)
			rec = append(rec, paretoCSV(v, &s, l)...)
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("writing CSV: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}
