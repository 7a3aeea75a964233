package verdict

import (
	"fmt"
	"math"
	"slices"
)

// What a sequential plan did to each variant: how many rounds it was
// launched for, whether it stopped, and why. The orchestrator launches the
// variants Open names in the next round, and the baseline while there is
// any.

// SequentialVerdict is the verdict's account of a sequential plan.
type SequentialVerdict struct {
	MinRounds int `json:"min_rounds"`
	MaxRounds int `json:"max_rounds"`
	// Variants hold one entry per variant, in campaign order.
	Variants []VariantStop `json:"variants"`
}

// VariantStop is one variant under a sequential plan.
type VariantStop struct {
	Variant string `json:"variant"`
	// Rounds is the launches the variant took that the verdict counts: its
	// completed launches up to the round after which it stopped, or all of
	// them while it is open.
	Rounds int `json:"rounds"`
	// Stopped is set when every comparison with the baseline (each level,
	// and the capacity) is closed, or the variant failed; StoppedAfter is
	// the round after which it stopped.
	Stopped      bool `json:"stopped"`
	StoppedAfter int  `json:"stopped_after,omitempty"`
	// Comparisons counts its comparisons with the baseline; Decided those
	// closed as faster, slower or tie; Inconclusive those that reached the
	// maximum rounds undecided.
	Comparisons  int `json:"comparisons"`
	Decided      int `json:"decided"`
	Inconclusive int `json:"inconclusive"`
	// Doubted counts the undecided comparisons whose measurement bakeoff
	// doubts over every launch (OutcomeDoubted): open, they keep the
	// variant launching in case the doubt clears; at the maximum they are
	// neither decided nor inconclusive.
	Doubted int `json:"doubted,omitempty"`
	// MaxMDEPct is the largest minimum detectable effect, percent, among its
	// inconclusive comparisons.
	MaxMDEPct float64 `json:"max_mde_pct,omitempty"`
	// Bounded counts, of the inconclusive, the capacities known only as a
	// one-sided bound: their MDE is no figure a table shows (CampaignCost's
	// Bounded), so it is not MaxMDEPct's.
	Bounded int `json:"bounded,omitempty"`
	// Reason says why it stopped or goes on: "decided after 3 rounds",
	// "max rounds reached: inconclusive at 2 of 8 comparisons, MDE 4.1%",
	// "open after 4 rounds: 3 of 9 comparisons undecided".
	Reason string `json:"reason"`
}

// stopping is each variant's state once the looks are replayed.
func stopping(v *Verdict, plan SequentialPlan, hs []*hypothesis) *SequentialVerdict {
	sv := &SequentialVerdict{MinRounds: plan.MinRounds, MaxRounds: plan.MaxRounds}
	base := v.baselineIndex()
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		if i == base {
			continue
		}
		vs := VariantStop{Variant: s.Name}
		open, last := 0, 0
		var lasting *Doubt // why a comparison closed doubted at a look
		for _, h := range hs {
			if !h.against(v, base, i) {
				continue
			}
			vs.Comparisons++
			_, inDoubt := v.doubted[h.key]
			inDoubt = inDoubt && h.capacity < 0 && !h.decided
			if inDoubt {
				vs.Doubted++
				if d := v.doubted[h.key]; h.lasting && lasting == nil {
					for j := range d.Doubts {
						if d.Doubts[j].Lasting {
							lasting = &d.Doubts[j]
							break
						}
					}
				}
			}
			switch {
			case !h.closed:
				open++
			case inDoubt:
				// Closed at the maximum undecided, but not inconclusive:
				// counted in Doubted above, with no MDE of its own.
			case h.decided:
				vs.Decided++
			default:
				vs.Inconclusive++
				c := h.at
				if h.capacity >= 0 {
					cc := v.Capacity.Comparisons[h.capacity]
					if cc.Censored {
						vs.Bounded++
						break
					}
					c = cc.Comparison
				} else if cell := v.Cell(h.key.c, s.Name); cell != nil {
					c = cell.Comparison
				}
				vs.MaxMDEPct = math.Max(vs.MaxMDEPct, c.MDEPct)
			}
			if h.closed {
				last = max(last, h.closedAt)
			}
		}
		completed := v.completedReplicates(s)
		switch {
		case s.Failed() || (base >= 0 && v.Scenarios[base].Failed()):
			vs.Stopped, vs.Rounds = true, completed
			vs.Reason = "failed: nothing to compare"
		case vs.Comparisons == 0 && completed >= plan.MaxRounds:
			vs.Stopped, vs.StoppedAfter, vs.Rounds = true, plan.MaxRounds, completed
			vs.Reason = "max rounds reached: nothing compared"
		case vs.Comparisons == 0 || open > 0:
			vs.Rounds = completed
			vs.Reason = fmt.Sprintf("open after %s: %d of %d comparisons undecided%s", Plural(completed, "round", "rounds"), max(open, vs.Comparisons-vs.Decided-vs.Inconclusive), vs.Comparisons, doubtedOf(vs.Doubted))
		default:
			vs.Stopped, vs.StoppedAfter = true, last
			vs.Rounds = v.launchesUpTo(s, last)
			switch {
			case vs.Inconclusive == 0 && vs.Doubted > 0 && lasting != nil && last < plan.MaxRounds:
				vs.Reason = fmt.Sprintf("stopped after %s: doubted at %d of %d comparisons for a reason no more rounds can clear: %s; to clear it, %s",
					Plural(last, "round", "rounds"), vs.Doubted, vs.Comparisons, lasting.Text, DoubtAdvice(lasting.Kind))
			case vs.Inconclusive == 0 && vs.Doubted > 0:
				vs.Reason = fmt.Sprintf("max rounds reached: doubted at %d of %d comparisons, never decided", vs.Doubted, vs.Comparisons)
			case vs.Inconclusive == 0 && vs.Rounds == last:
				vs.Reason = fmt.Sprintf("decided after %s", Plural(last, "round", "rounds"))
			case vs.Inconclusive == 0:
				// A launch failed: the rounds it took are not the round it
				// stopped after, and the line must not give both as "rounds".
				vs.Reason = fmt.Sprintf("decided after round %d, on %s", last, Plural(vs.Rounds, "launch", "launches"))
			default:
				vs.Reason = fmt.Sprintf("max rounds reached: inconclusive at %d of %d comparisons, %s%s", vs.Inconclusive, vs.Comparisons, stopMDE(vs), doubtedOf(vs.Doubted))
			}
		}
		sv.Variants = append(sv.Variants, vs)
	}
	return sv
}

// stopMDE is what a variant's stop line says of its inconclusive
// comparisons: their largest MDE, and those against a one-sided capacity
// bound apart, as the cost line says them.
func stopMDE(vs VariantStop) string {
	switch {
	case vs.Bounded == 0:
		return MDEShort(vs.MaxMDEPct)
	case vs.Bounded == vs.Inconclusive:
		return boundedWords(vs.Bounded)
	}
	return MDEShort(vs.MaxMDEPct) + "; " + boundedWords(vs.Bounded)
}

// doubtedOf is how many of the undecided comparisons are doubted, as a
// stop reason's tail: "" or " (1 doubted)".
func doubtedOf(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d doubted)", n)
}

// against reports whether h compares scenario i with the baseline.
func (h *hypothesis) against(v *Verdict, base, i int) bool {
	if h.capacity >= 0 {
		return v.Capacity.Comparisons[h.capacity].Variant == v.Scenarios[i].Name
	}
	return (h.key.i == base && h.key.j == i) || (h.key.j == base && h.key.i == i)
}

// launchesUpTo counts the scenario's completed launches in rounds up to k
// (replicates, when split: a variant has one in each).
func (v *Verdict) launchesUpTo(s *Scenario, k int) int {
	n := 0
	for _, l := range s.Launches {
		if !l.Cut() && v.replicate(l.Round) <= k {
			n++
		}
	}
	return n
}

// Open returns the variants that a sequential plan still launches, in
// campaign order: those with a comparison with the baseline not yet
// closed, in throughput or in any of the verdict's metrics. The baseline is launched in every round while any is. Nil under a
// fixed design.
func Open(v *Verdict) []string {
	if v.Sequential == nil {
		return nil
	}
	var out []string
	for _, vs := range v.LaunchStops() {
		if !vs.Stopped {
			out = append(out, vs.Variant)
		}
	}
	return out
}

// metricStops are the sequential accounts of the verdict's metrics.
func metricStops(v *Verdict) []*SequentialVerdict {
	var out []*SequentialVerdict
	for _, mv := range v.Metrics {
		if mv.Sequential != nil {
			out = append(out, mv.Sequential)
		}
	}
	return out
}

// RoundsAskedOf is the rounds the campaign asked of a scenario: the planned
// rounds, or under a sequential plan the rounds up to the one after which
// the scenario stopped (the baseline stops with the last variant), and for
// one still launched the rounds run so far.
func (v *Verdict) RoundsAskedOf(name string) int {
	if v.Sequential == nil {
		return v.RoundsPlanned
	}
	last, open := 0, false
	for _, vs := range v.LaunchStops() {
		if vs.Variant == name && vs.Stopped {
			return vs.StoppedAfter
		}
		open = open || !vs.Stopped
		last = max(last, vs.StoppedAfter)
	}
	if name == v.Baseline && !open {
		return last
	}
	return v.Rounds
}

// sequentialRounds sets the verdict's planned and completed rounds under a
// sequential plan: planned is the plan's maximum while a variant is open,
// else the round after which the last one stopped; completed is that less
// the largest shortfall of any scenario against the rounds asked of it (a
// stopped variant's later rounds were never asked for).
func sequentialRounds(v *Verdict) {
	if v.Sequential == nil {
		return
	}
	v.RoundsPlanned = v.Sequential.MaxRounds
	done := v.Rounds
	if len(Open(v)) == 0 {
		v.RoundsPlanned = v.RoundsAskedOf(v.Baseline)
		done = v.RoundsPlanned
	}
	short := 0
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		if s.Failed() || len(s.Launches) == 0 {
			continue
		}
		short = max(short, v.RoundsAskedOf(s.Name)-v.completedReplicates(s))
	}
	v.RoundsCompleted = max(done-short, 0)
}

// LaunchStops are the variants' stops as the campaign launched them: a
// variant stopped only once its comparisons in throughput and in every
// metric the verdict decides (Metrics) had closed, after the latest of
// those rounds. Each entry is the throughput's (its counts and reason)
// with Stopped and StoppedAfter taken over every metric; nil under a fixed
// design.
func (v *Verdict) LaunchStops() []VariantStop {
	if v.Sequential == nil {
		return nil
	}
	out := slices.Clone(v.Sequential.Variants)
	for i := range out {
		for _, sv := range metricStops(v) {
			for _, ms := range sv.Variants {
				if ms.Variant != out[i].Variant {
					continue
				}
				out[i].Stopped = out[i].Stopped && ms.Stopped
				out[i].StoppedAfter = max(out[i].StoppedAfter, ms.StoppedAfter)
			}
		}
		if !out[i].Stopped {
			out[i].StoppedAfter = 0
		}
	}
	return out
}
