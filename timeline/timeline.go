// Package timeline is the server's /metrics scraped through a sweep at a
// fixed interval: the series in memory, their deduplicated JSON-lines file
// (file.go, docs/RESULTS.md), and their summary over a level's steady-state
// window (summary.go) with Prometheus' semantics for counters, gauges and
// histograms.
//
// The window arithmetic is written here rather than imported: Prometheus'
// own (promql.extrapolatedRate, promql.BucketQuantile) lives in the
// prometheus/prometheus module, which would bring its whole query engine and
// storage into this binary for three small functions; the libraries bakeoff
// already has (prometheus/common/expfmt, client_model) parse the exposition
// and nothing more.
package timeline

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// Series is one time series of the exposition: a sample name and its labels.
// A histogram's buckets are series of their own (NAME_bucket with an `le`
// label), as are its _sum and _count, the way Prometheus stores them.
type Series struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// Type is the family's type as the exposition declared it: counter,
	// gauge, histogram, summary or untyped.
	Type string `json:"type"`
}

// key identifies a series: its name and its labels, sorted.
func (s Series) key() string {
	var b strings.Builder
	b.WriteString(s.Name)
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		b.WriteString("\xff" + k + "=" + s.Labels[k])
	}
	return b.String()
}

// Point is one series' value in one scrape.
type Point struct {
	Series
	Value float64
}

// Timeline is every scrape of a sweep: the scrape times and each series'
// value at each of them.
type Timeline struct {
	Series []Series
	// Times are the scrapes' times, Unix nanoseconds on the records' clock,
	// in order.
	Times []int64
	// Values[i][k] is series i at Times[k]; NaN where that scrape did not
	// carry the series (before it appeared, after it went).
	Values [][]float64
	index  map[string]int
}

// Add appends one scrape taken at t. A scrape at or before the last one's
// time is dropped: the timeline's times only go forward.
func (tl *Timeline) Add(t int64, pts []Point) {
	if n := len(tl.Times); n > 0 && t <= tl.Times[n-1] {
		return
	}
	if tl.index == nil {
		tl.index = map[string]int{}
		for i, s := range tl.Series {
			tl.index[s.key()] = i
		}
	}
	k := len(tl.Times)
	tl.Times = append(tl.Times, t)
	for i := range tl.Values {
		tl.Values[i] = append(tl.Values[i], math.NaN())
	}
	for _, p := range pts {
		i, ok := tl.index[p.key()]
		if !ok {
			i = len(tl.Series)
			tl.index[p.key()] = i
			tl.Series = append(tl.Series, p.Series)
			col := make([]float64, k+1)
			for j := range col {
				col[j] = math.NaN()
			}
			tl.Values = append(tl.Values, col)
		}
		tl.Values[i][k] = p.Value
	}
}

// named returns the indexes of the series called name that its figures
// read: of a series the ranks of one scheduler group write alike, the one
// copy per group that engine.Counted keeps.
func (tl *Timeline) named(name string) []int {
	var idx []int
	var sets []map[string]string
	for i, s := range tl.Series {
		if s.Name == name {
			idx = append(idx, i)
			sets = append(sets, s.Labels)
		}
	}
	keep := engine.Counted(name, sets)
	out := idx[:0]
	for k, i := range idx {
		if keep[k] {
			out = append(out, i)
		}
	}
	return out
}

// formatLe writes a bucket bound as Prometheus' text format does.
func formatLe(v float64) string {
	if math.IsInf(v, +1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
