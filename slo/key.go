package slo

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// The metrics a bound can be on, in the order an objective lists them.
const (
	MetricTTFT = "ttft" // time to first token
	MetricTPOT = "tpot" // time per output token after the first
	MetricITL  = "itl"  // each gap between tokens (measure.Gaps)
	MetricE2E  = "e2e"  // the whole request
)

// Metrics are the metrics a bound can be on, in the order an objective
// lists them.
var Metrics = []string{MetricTTFT, MetricTPOT, MetricITL, MetricE2E}

// KeyGrammar says how a bound's key is written, for error messages.
var KeyGrammar = "METRIC_pN with METRIC one of " + strings.Join(Metrics, ", ") +
	" and pN a percentile (itl_p95, ttft_p99.9)"

// Key is the key of a bound on metric at percentile p: "itl_p95".
func Key(metric string, p float64) string { return metric + "_" + measure.PercentileName(p) }

// ParseKey reads a bound's key, METRIC_pN: the metric and the percentile
// (0–100), strictly (measure.ParsePercentile), so each bound has one key.
func ParseKey(key string) (metric string, p float64, err error) {
	metric, pct, ok := strings.Cut(key, "_")
	if !ok || !slices.Contains(Metrics, metric) {
		return "", 0, fmt.Errorf("unknown key %q (known: %s; and %s)", key, KeyGrammar, MinSuccess)
	}
	p, err = measure.ParsePercentile(pct)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", key, err)
	}
	return metric, p, nil
}

// sortedKeys are the bounds' keys in the order an objective lists them: by
// metric (Metrics), then by percentile.
func sortedKeys(bounds map[string]float64) []string {
	return slices.SortedFunc(maps.Keys(bounds), func(a, b string) int {
		ma, pa, _ := ParseKey(a)
		mb, pb, _ := ParseKey(b)
		return cmp.Or(cmp.Compare(slices.Index(Metrics, ma), slices.Index(Metrics, mb)), cmp.Compare(pa, pb), cmp.Compare(a, b))
	})
}

// Equal reports whether two objectives have the same bounds and success
// share: runs judged under different ones have capacities that do not
// compare.
func (s SLO) Equal(o SLO) bool {
	return maps.Equal(s.boundSet(), o.boundSet()) && s.MinSuccess == o.MinSuccess
}

// boundSet are the bounds that are part of the objective: a zero one is not.
func (s SLO) boundSet() map[string]float64 {
	out := map[string]float64{}
	for _, b := range s.bounds() {
		out[b.name] = b.limit
	}
	return out
}
