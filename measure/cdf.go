package measure

import (
	"slices"
)

// CDFProbabilities are the cumulative probabilities a CDF is kept at: every
// percent, and finer in the tail, where latency objectives are set.
var CDFProbabilities = cdfProbabilities()

func cdfProbabilities() []float64 {
	var out []float64
	for i := 0; i <= 100; i++ {
		out = append(out, float64(i)/100)
		if i == 99 {
			out = append(out, 0.995, 0.999)
		}
	}
	return out
}

// CDF is a distribution drawn as its cumulative distribution function: the
// value (seconds) below which each share P of the values lies, by
// Percentile, so a point of the CDF and a table's percentile agree. P runs
// from 0 (the minimum) to 1 (the maximum) over CDFProbabilities; a plot
// draws (Seconds[i], P[i]).
type CDF struct {
	N       int       `json:"n"`
	P       []float64 `json:"p"`
	Seconds []float64 `json:"s"`
}

// CDFOf is the CDF of values (any order; not modified); nil when there are
// none.
func CDFOf(values []float64) *CDF {
	if len(values) == 0 {
		return nil
	}
	x := slices.Clone(values)
	slices.Sort(x)
	c := &CDF{N: len(x), P: CDFProbabilities, Seconds: make([]float64, len(CDFProbabilities))}
	for i, p := range CDFProbabilities {
		c.Seconds[i] = sortedPercentile(x, 100*p)
	}
	return c
}
