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
}

// DistOf summarizes values (any order; not modified).
func DistOf(values []float64) Dist {
	if len(values) == 0 {
		return Dist{}
	}
	x := slices.Clone(values)
	slices.Sort(x)
	return Dist{
		N:    len(x),
		Mean: mean(x),
		P50:  Percentile(x, 50),
		P90:  Percentile(x, 90),
		P99:  Percentile(x, 99),
		Min:  x[0],
		Max:  x[len(x)-1],
	}
}
