package rule

import (
	"cmp"
	"math"
	"slices"
)

// Corrections for testing many levels and variants at once: the family is
// every comparison a verdict (or a diff) makes, and a difference is called
// significant only when its adjusted p-value is below alpha.
// docs/METHOD.md says why Holm's is the default.
const (
	// CorrectionBH is the Benjamini–Hochberg step-up procedure: controls the
	// expected share of false discoveries among the levels called different,
	// and the chance of any false discovery when nothing differs.
	CorrectionBH = "bh"
	// CorrectionHolm is Holm's step-down procedure: controls the chance of
	// any false discovery whatever differs.
	CorrectionHolm = "Holm"
	// CorrectionNone tests every comparison at alpha on its own.
	CorrectionNone = "none"
)

// DefaultCorrection is the correction a verdict applies.
const DefaultCorrection = CorrectionHolm

// Adjust returns the adjusted p-values of p under the named correction, in
// p's order.
func Adjust(p []float64, method string) []float64 {
	switch method {
	case CorrectionHolm:
		return Holm(p)
	case CorrectionNone:
		return slices.Clone(p)
	}
	return benjaminiHochberg(p)
}

// order returns the indices of p sorted by increasing p-value (stable).
func order(p []float64) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	return idx
}

// benjaminiHochberg: the i-th smallest of m p-values is adjusted to
// min over j ≥ i of m·p(j)/j, capped at 1.
func benjaminiHochberg(p []float64) []float64 {
	m := len(p)
	out := make([]float64, m)
	idx := order(p)
	run := 1.0
	for k := m - 1; k >= 0; k-- {
		i := idx[k]
		run = math.Min(run, p[i]*float64(m)/float64(k+1))
		out[i] = run
	}
	return out
}

// Holm: the i-th smallest of m p-values is adjusted to max over j ≤ i of
// (m−j+1)·p(j), capped at 1.
func Holm(p []float64) []float64 {
	m := len(p)
	out := make([]float64, m)
	idx := order(p)
	run := 0.0
	for k, i := range idx {
		run = math.Max(run, math.Min(1, p[i]*float64(m-k)))
		out[i] = run
	}
	return out
}
