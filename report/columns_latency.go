package report

import (
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// latencyMetric is one per-request latency distribution of a level, as its
// column shows it.
type latencyMetric struct {
	Head  string // the column's title: "TTFT"
	Key   string // its page field and CSV prefix: "ttft"
	Scale float64
	// Digits are the decimals shown, in the unit Scale gives (ms for 1e3).
	Digits int
	// Mean shows the mean before the percentiles.
	Mean bool
	Of   func(l *verdict.Level) measure.Dist
}

// latencyColumn is m's column at the percentiles ps: "TTFT p50/p90/p99 s",
// its figures ttft-p50 (page) and ttft_p50_s (CSV, always seconds) and so
// on. A level with no value of m (no request with a gap, for ITL) shows "-".
func latencyColumn(ps []float64, m latencyMetric) levelColumn {
	unit := " s"
	if m.Scale == 1e3 {
		unit = " ms"
	}
	var names []string
	var figs []figure
	if m.Mean {
		names = append(names, "avg")
		figs = append(figs, figure{Field: m.Key + "-mean", CSV: m.Key + "_mean_s", Scale: m.Scale, Digits: m.Digits,
			Of: func(l *verdict.Level) (float64, bool) { d := m.Of(l); return d.Mean, d.N > 0 }})
	}
	for _, p := range ps {
		name := measure.PercentileName(p)
		names = append(names, name)
		figs = append(figs, figure{Field: m.Key + "-" + name, CSV: m.Key + "_" + name + "_s", Scale: m.Scale, Digits: m.Digits,
			Of: func(l *verdict.Level) (float64, bool) { return m.Of(l).At(p) }})
	}
	return levelColumn{Head: m.Head + " " + strings.Join(names, "/") + unit, Figures: figs}
}
