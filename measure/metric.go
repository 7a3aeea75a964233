package measure

import (
	"fmt"
	"slices"
	"strings"
)

// Metric is a figure the verdict can decide per level, one value per
// launch, as it decides throughput: the campaign's `verdict.metrics`. Each
// is a figure of the level's steady state (the requests sent after its
// window opened and finished by its end, or every request when the level
// has no steady state), so that a ramp's requests, which meet a batch
// still filling or emptying, move none of them.
type Metric struct {
	// Name is the campaign's key: "throughput", "user_tps", "ttft_p50",
	// "ttft_p99", "itl_p99".
	Name string
	// Label names it in tables and sentences ("TTFT p99"); Unit is what
	// Scale turns its value (seconds or tok/s) into for display.
	Label string
	Unit  string
	Scale float64
	// Lower is true when a lower value is better (a latency).
	Lower bool
	// MarginPct is the ± tie margin, percent, it is decided at unless the
	// campaign gives one: 0 for throughput and per-user speed, which take
	// the campaign's equivalence_margin; a percentile, read from a few
	// dozen requests a launch, cannot be tied as closely.
	MarginPct float64
	// of is its value over one launch's repeats at a level; ok is false
	// when the launch has nothing to read it from.
	of func(level Level, repeats [][]Record) (float64, bool)
}

// MetricThroughput is the verdict's own metric, the steady-state throughput
// (LevelThroughput): the one every campaign decides.
const MetricThroughput = "throughput"

// Metrics are the metrics a campaign may ask the verdict to decide, in the
// order tables show them.
var Metrics = []Metric{
	{Name: MetricThroughput, Label: "throughput", Unit: "tok/s", Scale: 1},
	{Name: "user_tps", Label: "per-user speed", Unit: "tok/s", Scale: 1,
		of: func(level Level, reps [][]Record) (float64, bool) {
			// What a chat user sees stream: one over the median time per
			// output token, as the Pareto frontier's per-user speed.
			tpot := steadyValues(level, reps, func(r Record) (float64, bool) {
				return r.TPOT().Seconds(), r.Tokens >= 2 && r.FirstNs != 0
			})
			if len(tpot) == 0 {
				return 0, false
			}
			if m := Percentile(tpot, 50); m > 0 {
				return 1 / m, true
			}
			return 0, false
		}},
	{Name: "ttft_p50", Label: "TTFT p50", Unit: "ms", Scale: 1e3, Lower: true, MarginPct: 5, of: ttftAt(50)},
	{Name: "ttft_p99", Label: "TTFT p99", Unit: "ms", Scale: 1e3, Lower: true, MarginPct: 10, of: ttftAt(99)},
	{Name: "itl_p99", Label: "ITL p99", Unit: "ms", Scale: 1e3, Lower: true, MarginPct: 10,
		of: func(level Level, reps [][]Record) (float64, bool) {
			var gaps []float64
			for _, recs := range reps {
				gaps = append(gaps, SteadyITL(level, inSendOrder(recs))...)
			}
			return positive(Percentile(gaps, 99), len(gaps) > 0)
		}},
}

// MetricByName returns the named metric; ok is false for a name Metrics
// does not hold.
func MetricByName(name string) (Metric, bool) {
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}

// MetricNames lists the metrics' names, for an error that names the valid
// ones.
func MetricNames() string {
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// Of is the metric's value over one launch's repeats at level (each
// element one repeat's records, warm-up left out); ok is false when the
// launch has no request to read it from. Throughput is LevelThroughput's,
// summed over the repeats' windows as the verdict sums it.
func (m Metric) Of(level Level, repeats ...[]Record) (float64, bool) {
	if m.of == nil {
		panic(fmt.Sprintf("measure: metric %q is read by the verdict's own throughput path", m.Name))
	}
	return m.of(level, repeats)
}

// Better reports whether a is better than b in this metric.
func (m Metric) Better(a, b float64) bool {
	if m.Lower {
		return a < b
	}
	return a > b
}

func ttftAt(p float64) func(Level, [][]Record) (float64, bool) {
	return func(level Level, reps [][]Record) (float64, bool) {
		ttft := steadyValues(level, reps, func(r Record) (float64, bool) {
			return r.TTFT().Seconds(), r.FirstNs != 0
		})
		return positive(Percentile(ttft, p), len(ttft) > 0)
	}
}

// steadyValues are value(r) over each repeat's successful requests inside
// its steady state (every successful request when it has none) for which
// value says ok.
func steadyValues(level Level, reps [][]Record, value func(Record) (float64, bool)) []float64 {
	var out []float64
	for _, recs := range reps {
		recs = inSendOrder(recs)
		w, steady := throughputWindow(level, recs)
		for _, r := range recs {
			if !r.OK() || (steady && !InSteadyState(r, w)) {
				continue
			}
			if x, ok := value(r); ok {
				out = append(out, x)
			}
		}
	}
	return out
}

// positive is x when ok and x > 0: a latency of zero is a clock that did
// not move, no reading.
func positive(x float64, ok bool) (float64, bool) {
	if !ok || !(x > 0) {
		return 0, false
	}
	return x, true
}
