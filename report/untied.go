package report

import (
	"fmt"
	"math"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// untiedLine says, in one line under the table, that the run was too noisy
// to tie anything, and how loaded its host was: no comparison tied, some
// were left "?", and the tie interval of every one of those was wider than
// the whole ±equivalence_margin band, so no tie was possible wherever its
// estimate fell. A table of "?" alone reads as scenarios that differ by a
// little; this line says the run could not have told. Empty when some
// comparison tied or could have.
func untiedLine(v *verdict.Verdict) string {
	lo, hi, ok := untiedMDEs(v)
	if !ok {
		return ""
	}
	s := fmt.Sprintf("nothing could be tied: the noise left every ? with a %.0f%% interval wider than the ±%s band a tie needs (%s)",
		100*(1-2*v.Alpha), trimPct(v.EquivalenceMarginPct), mdeRange(lo, hi))
	if v.Cost != nil && v.Cost.Load != nil {
		s += "; " + loadWords(*v.Cost.Load)
	}
	return s
}

// untiedMDEs reports whether no comparison of the verdict tied or could
// have (untiedLine), with the smallest and largest MDE of the inconclusive
// ones (0 when none has one).
func untiedMDEs(v *verdict.Verdict) (lo, hi float64, ok bool) {
	m := v.EquivalenceMarginPct / 100
	if m <= 0 || m >= 1 {
		return 0, 0, false
	}
	band := (1 + m) / (1 - m) // the widest ratio of an interval's ends a tie fits
	n := 0
	for _, r := range v.Rows {
		for _, c := range r.Cells {
			if !c.Compared {
				continue
			}
			switch c.Outcome {
			case verdict.OutcomeTie:
				return 0, 0, false
			case verdict.OutcomeInconclusive:
				if c.OutcomeLo > 0 && c.OutcomeHi/c.OutcomeLo <= band {
					return 0, 0, false
				}
				n++
				if c.MDEPct > 0 {
					lo, hi = minPositive(lo, c.MDEPct), math.Max(hi, c.MDEPct)
				}
			}
		}
	}
	if v.Capacity != nil {
		for _, c := range v.Capacity.Comparisons {
			if c.Outcome == verdict.OutcomeTie {
				return 0, 0, false
			}
		}
	}
	return lo, hi, n > 0
}

// minPositive is the smaller of a and b, a being unset while 0.
func minPositive(a, b float64) float64 {
	if a == 0 {
		return b
	}
	return math.Min(a, b)
}

// mdeRange is the MDEs of the cells, as they show them: "MDE 12.0% to
// 30.1%", "MDE 8.6%", "MDE 18.8% to > 100%", or "no MDE".
func mdeRange(lo, hi float64) string {
	if lo == hi || lo <= 0 {
		return verdict.MDEShort(hi)
	}
	top := fmt.Sprintf("%.1f%%", hi)
	if hi >= verdict.MaxMDEPct {
		top = fmt.Sprintf("> %d%%", verdict.MaxMDEPct)
	}
	return fmt.Sprintf("%s to %s", verdict.MDEShort(lo), top)
}

// loadWords is the host's load around the sweeps: "the host ran at load 3.1
// around its sweeps (up to 4.2), some task waiting for a CPU 38% of the
// time".
func loadWords(h verdict.HostLoad) string {
	s := fmt.Sprintf("the host ran at load %.1f around its sweeps", h.Load1)
	if fmt.Sprintf("%.1f", h.Load1Max) != fmt.Sprintf("%.1f", h.Load1) {
		s += fmt.Sprintf(" (up to %.1f)", h.Load1Max)
	}
	if h.CPUSomePct != nil {
		s += fmt.Sprintf(", some task waiting for a CPU %.0f%% of the time", *h.CPUSomePct)
	}
	return s
}
