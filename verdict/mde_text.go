package verdict

import (
	"fmt"
	"math"
)

// How a minimum detectable effect reads. With few rounds and many
// comparisons the MDE grows without bound: two rounds give one degree of
// freedom, and Holm over 30 comparisons asks for t at 0.0017, about 380,
// so a 2.5% launch-to-launch variation makes an MDE of 10³⁸ percent. Such
// a figure is not an estimate anyone can use, and as 39 digits it also
// widened the verdict table past any terminal. It reads as a bound.

// MaxMDEPct is the largest MDE, percent, written as a figure in a cell
// ("MDE 99.9%"); a larger one is "MDE > 100%", where a slowdown of that
// size is no longer possible and the figure says nothing more.
const MaxMDEPct = 100

// MaxMDEFactor is the largest factor MDEText writes: an MDE past it is
// "nothing under a factor of ×1000".
const MaxMDEFactor = 1000

// MDEShort is an MDE for a table cell or a clause: "MDE 3.4%", "MDE >
// 100%" past MaxMDEPct, or "no MDE" without an error estimate.
func MDEShort(pct float64) string {
	switch {
	case pct <= 0 || math.IsNaN(pct):
		return "no MDE"
	case pct >= MaxMDEPct:
		return fmt.Sprintf("MDE > %d%%", MaxMDEPct)
	}
	return fmt.Sprintf("MDE %.1f%%", pct)
}

// MDEClause is "could detect ±3.4%" for an inconclusive comparison, or
// "could detect no difference" when it has no error estimate.
func (c Comparison) MDEClause() string {
	if c.MDEPct <= 0 {
		return "could detect no difference"
	}
	return "could detect " + MDEText(c.MDEPct)
}

// MDEText is a smallest detectable difference for people: "±3.4%", or, past
// 100% (where a slowdown of that size is impossible and "±57913.7%" says
// nothing), the factor either way: "only a factor beyond ×580", and past
// MaxMDEFactor "nothing under a factor of ×1000".
func MDEText(pct float64) string {
	switch f := 1 + pct/100; {
	case pct < MaxMDEPct:
		return fmt.Sprintf("±%.1f%%", pct)
	case f >= MaxMDEFactor || math.IsNaN(f):
		return fmt.Sprintf("nothing under a factor of ×%d", MaxMDEFactor)
	default:
		return fmt.Sprintf("only a factor beyond ×%.3g", f)
	}
}

// MDEWords is what an inconclusive stretch could have seen.
func MDEWords(mde float64) string {
	switch f := 1 + mde/100; {
	case mde <= 0:
		return "no difference could be detected"
	case mde < MaxMDEPct:
		return fmt.Sprintf("differences under ±%.1f%% could not be detected", mde)
	case f >= MaxMDEFactor || math.IsNaN(f):
		return fmt.Sprintf("differences under a factor of ×%d could not be detected", MaxMDEFactor)
	default:
		return fmt.Sprintf("differences under a factor of ×%.3g could not be detected", f)
	}
}
