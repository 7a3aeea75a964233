package verdict

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat/combin"
)

// comparison is one Mann-Whitney U test between two levels' samples.
type comparison struct {
	P        float64
	Hopeless bool
	Warnings []string
}

// assumption is the distributional assumption the samples are tested under.
// Slice throughputs are batch means over hundreds of decode steps, close to
// normal by the central limit theorem, and there are often only a few of
// them: Welch's t-test (benchmath.AssumeNormal) can reach significance with
// two per side where the Mann-Whitney U test needs four. docs/METHOD.md.
var assumption benchmath.Assumption = benchmath.AssumeNormal

// compareSamples tests whether a and b come from distributions with the same
// center, under assumption.
func compareSamples(a, b []float64, th *benchmath.Thresholds) comparison {
	sa := benchmath.NewSample(slices.Clone(a), th)
	sb := benchmath.NewSample(slices.Clone(b), th)
	c := assumption.Compare(sa, sb)
	out := comparison{P: c.P, Hopeless: hopeless(len(a), len(b), th.CompareAlpha)}
	for _, w := range c.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	if out.Hopeless && len(out.Warnings) == 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"%d and %d samples can never differ significantly at alpha %v", len(a), len(b), th.CompareAlpha))
	}
	return out
}

// hopeless reports whether samples of sizes n1 and n2 can never differ
// significantly at alpha under assumption: a t-test needs two values on each
// side to estimate a variance; the U test needs enough values that complete
// separation is rare enough.
func hopeless(n1, n2 int, alpha float64) bool {
	if assumption == benchmath.AssumeNothing {
		return minUTestP(n1, n2) >= alpha
	}
	return n1 < 2 || n2 < 2
}

// minUTestP is the smallest two-sided p-value the exact U test can give for
// samples of sizes n1 and n2: both orderings of complete separation out of
// every way to split the ranks.
func minUTestP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	if n1+n2 > 60 {
		return 0 // below any alpha anyone uses, and past float64's exact binomials
	}
	return math.Min(1, 2/float64(combin.Binomial(n1+n2, n1)))
}

// compareCell fills the comparison of a variant's level against the
// baseline's.
func compareCell(c *Cell, v, base *Level, th *benchmath.Thresholds) {
	c.Compared = true
	b := base.Throughput.Center
	if b > 0 {
		c.Speedup = v.Throughput.Center / b
		c.DeltaPct = 100 * (c.Speedup - 1)
	}
	// A conservative band: the variant's interval over the baseline's.
	if base.Throughput.Hi > 0 && base.Throughput.Lo > 0 && !math.IsInf(base.Throughput.Hi, 0) {
		c.SpeedupLo = v.Throughput.Lo / base.Throughput.Hi
		c.SpeedupHi = v.Throughput.Hi / base.Throughput.Lo
	}
	cmp := compareSamples(base.Samples, v.Samples, th)
	c.P = cmp.P
	c.Significant = cmp.P < th.CompareAlpha
	c.Hopeless = cmp.Hopeless
	c.Warnings = append(c.Warnings, cmp.Warnings...)
}

// pickWinner decides a row: the scenario with the highest mean wins when it
// is significantly ahead of every other scenario measured at that level;
// otherwise the scenarios not significantly behind it are tied.
func pickWinner(row *Row, levels []*Level, th *benchmath.Thresholds) {
	lead := -1
	for i, l := range levels {
		if l == nil || len(l.Samples) == 0 {
			continue
		}
		if lead < 0 || l.Throughput.Center > levels[lead].Throughput.Center {
			lead = i
		}
	}
	present := 0
	for _, l := range levels {
		if l != nil && len(l.Samples) > 0 {
			present++
		}
	}
	if present < 2 {
		return // nothing to compare with
	}
	tied := []string{row.Cells[lead].Scenario}
	for i, l := range levels {
		if i == lead || l == nil || len(l.Samples) == 0 {
			continue
		}
		if compareSamples(levels[lead].Samples, l.Samples, th).P >= th.CompareAlpha {
			tied = append(tied, row.Cells[i].Scenario)
		}
	}
	if len(tied) == 1 {
		row.Winner = tied[0]
		return
	}
	row.Tied = tied
}

// Compare tests two throughput samples as the verdict does (Welch's t-test,
// two-sided) and returns the p-value, whether the sizes can never reach
// significance at alpha, and benchmath's warnings. Package report's diff of
// two runs uses it so that both answer the same question the same way.
func Compare(a, b []float64, alpha float64) (p float64, hopeless bool, warnings []string) {
	c := compareSamples(a, b, &benchmath.Thresholds{CompareAlpha: alpha})
	return c.P, c.Hopeless, c.Warnings
}
