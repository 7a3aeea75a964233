package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// CSVHeader is the fixed column order of CSV.
var CSVHeader = append([]string{"scenario", "level", "requests", "ok", "failed", "tokens",
	"throughput_tok_s", "throughput_lo", "throughput_hi", "launches", "samples",
	"delta_pct", "speedup_lo", "speedup_hi", "p", "p_adjusted", "significant", "outcome", "mde_pct", "method", "winner",
	"per_request_tok_s", "latency_mean_s", "latency_p50_s", "latency_p99_s",
	"ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s",
	"achieved_concurrency", "accept_length",
	"attempt", "newest_attempt", "newest_status"}, csvEnergyHeader...)

// CSV writes one row per scenario and level, in campaign then level order.
// The comparison columns (delta_pct to method) are the scenario against the
// baseline, empty for the baseline itself; outcome is faster, slower, tie or
// inconclusive, p_adjusted the corrected p-value that decides it.
// Floats are written in full precision so the file reads back exactly.
// attempt is the attempt the figures come from; newest_attempt and
// newest_status are filled only when a newer attempt did not complete, so a
// spreadsheet cannot pass off a rerun's failure as its figures.
func CSV(w io.Writer, v *verdict.Verdict) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, row := range v.Rows {
		for i, s := range v.Scenarios {
			l := s.Level(row.Level)
			if l == nil {
				continue
			}
			c := row.Cells[i]
			delta, lo, hi, p, padj, sig, outcome, mde, method := "", "", "", "", "", "", "", "", ""
			if c.Compared {
				delta, lo, hi, p, padj = f(c.DeltaPct), f(c.SpeedupLo), f(c.SpeedupHi), f(c.P), f(c.PAdjusted)
				sig, outcome, mde, method = strconv.FormatBool(c.Significant), c.Outcome, f(c.MDEPct), c.Method
			}
			accept := ""
			if l.AcceptLength != nil {
				accept = f(*l.AcceptLength)
			}
			attempt, newest, newestStatus := "", "", ""
			if s.Attempt > 0 {
				attempt = strconv.Itoa(s.Attempt)
			}
			if s.Newest != nil {
				newest, newestStatus = strconv.Itoa(s.Newest.Attempt), s.Newest.Status
			}
			rec := []string{s.Name, strconv.FormatFloat(measure.LevelValue(l.Level), 'f', -1, 64), strconv.Itoa(l.Requests), strconv.Itoa(l.OK),
				strconv.Itoa(l.Failed), strconv.Itoa(l.Tokens),
				f(l.Throughput.Center), f(l.Throughput.Lo), f(l.Throughput.Hi), strconv.Itoa(len(l.Launches)), strconv.Itoa(len(l.Samples)),
				delta, lo, hi, p, padj, sig, outcome, mde, method, strconv.FormatBool(row.Winner == s.Name),
				f(l.PerRequest.Mean), f(l.Latency.Mean), f(l.Latency.P50), f(l.Latency.P99),
				f(l.TTFT.P50), f(l.TTFT.P99), f(l.TPOT.P50), f(l.TPOT.P99),
				f(l.AchievedConcurrency), accept,
				attempt, newest, newestStatus}
			rec = append(rec, energyCSV(l, f)...)
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
