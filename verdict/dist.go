package verdict

import (
	"slices"

	"gonum.org/v1/gonum/stat"
)

// distOf summarizes values (any order). Percentiles are gonum's empirical
// quantiles: the smallest value with at least that fraction at or below it.
func distOf(values []float64) Dist {
	if len(values) == 0 {
		return Dist{}
	}
	x := slices.Clone(values)
	slices.Sort(x)
	return Dist{
		N:    len(x),
		Mean: stat.Mean(x, nil),
		P50:  stat.Quantile(0.50, stat.Empirical, x, nil),
		P90:  stat.Quantile(0.90, stat.Empirical, x, nil),
		P99:  stat.Quantile(0.99, stat.Empirical, x, nil),
		Min:  x[0],
		Max:  x[len(x)-1],
	}
}
