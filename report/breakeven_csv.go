package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// BreakEvenFile is the break-even of each variant, as CSV.
const BreakEvenFile = "breakeven.csv"

// BreakEvenHeader is BreakEvenCSV's column order.
var BreakEvenHeader = []string{"scenario", "kind", "pays", "load", "load_lo", "load_hi", "confidence", "from", "to", "rounds",
	"batch", "batch_lo", "batch_hi", "batch_source", "setting_engine", "setting_key", "setting_value", "setting_lo", "setting_hi",
	"setting", "why", "sentence"}

// BreakEvenCSV writes one row per variant with a crossover: where its
// speedup over the baseline crosses 1 (kind crosses) or the bound the levels
// give (above, below), with the interval, the server's running batch there,
// the setting it suggests and the sentences the report prints; kind none
// says that nothing is claimed. A spreadsheet gets the loads as numbers in
// the levels' unit (concurrent requests, or requests per second), and a
// figure the row lacks as an empty cell. It is a table per variant, not per
// level, so it is a file of its own beside summary.csv.
func BreakEvenCSV(w io.Writer, v *verdict.Verdict) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(BreakEvenHeader); err != nil {
		return fmt.Errorf("writing %s: %w", BreakEvenFile, err)
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	level := func(l measure.Level) string {
		if l == (measure.Level{}) {
			return ""
		}
		return f(measure.LevelValue(l))
	}
	for _, x := range v.Crossovers {
		be := x.BreakEven
		if be == nil {
			continue
		}
		rec := make([]string, len(BreakEvenHeader))
		rec[0], rec[1], rec[2] = x.Scenario, be.Kind, be.Pays
		if be.Kind == verdict.BreakEvenCrosses {
			rec[3], rec[4], rec[5], rec[6] = f(be.Load), f(be.Lo), f(be.Hi), f(be.Confidence)
		}
		rec[7], rec[8] = level(be.From), level(be.To)
		if be.Rounds > 0 {
			rec[9] = strconv.Itoa(be.Rounds)
		}
		if b := be.Batch; b != nil {
			rec[10], rec[11], rec[12], rec[13] = f(b.Center), f(b.Lo), f(b.Hi), b.Source
		}
		if s := be.Suggestion; s != nil {
			rec[14], rec[15], rec[16], rec[17], rec[18], rec[19] = s.Engine, s.Key, strconv.Itoa(s.Value), strconv.Itoa(s.Lo), strconv.Itoa(s.Hi), s.Setting
		}
		rec[20], rec[21] = x.Why, be.Sentence
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("writing %s: %w", BreakEvenFile, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing %s: %w", BreakEvenFile, err)
	}
	return nil
}
