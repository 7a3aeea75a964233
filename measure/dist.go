package measure

import (
	"slices"
)

// Dist summarizes a per-request distribution. Its percentiles are
// Percentile's, the project's one definition.
type Dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	// Percentiles are the values at the percentiles the run asked for
	// (sweep.percentiles), keyed by PercentileName ("p95"); absent from
	// DistOf, which has only the three above.
	Percentiles map[string]float64 `json:"percentiles,omitempty"`
}

// At is the value at percentile p: from Percentiles, else from the three
// every Dist has; ok is false for a percentile it was not made with, or
// when it has no values.
func (d Dist) At(p float64) (float64, bool) {
	if d.N == 0 {
		return 0, false
	}
	if x, ok := d.Percentiles[PercentileName(p)]; ok {
		return x, true
	}
	switch p {
	case 50:
		return d.P50, true
	case 90:
		return d.P90, true
	case 99:
		return d.P99, true
	}
	return 0, false
}

// DistAt is DistOf with the values at each of ps (0–100) as well.
func DistAt(values []float64, ps []float64) Dist {
	if len(values) == 0 {
		return Dist{}
	}
	x := slices.Clone(values)
	slices.Sort(x)
	d := DistOf(x)
	d.Percentiles = make(map[string]float64, len(ps))
	for _, p := range ps {
		d.Percentiles[PercentileName(p)] = sortedPercentile(x, p)
	}
	return d
}

// DistOf summarizes values (any order; not modified).
func DistOf(values []float64) Dist {
	if len(values) == 0 {
		return Dist{}
	}
	x := values
	if !slices.IsSorted(x) {
		x = slices.Clone(values)
		slices.Sort(x)
	}
	return Dist{
		N:    len(x),
		Mean: mean(x),
		P50:  sortedPercentile(x, 50),
		P90:  sortedPercentile(x, 90),
		P99:  sortedPercentile(x, 99),
		Min:  x[0],
		Max:  x[len(x)-1],
	}
}
