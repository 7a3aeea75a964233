package verdict

import (
	"maps"
	"slices"
)

// A sequential verdict replays the campaign's looks: after each round it
// sees the launches of that round and the earlier ones only, as the verdict
// computed then saw them. These are the views of the data at one look.

// levelsUpTo returns copies of levels keeping the launches of rounds up to
// and including replicate k. A level left with one launch takes that
// launch's samples, as a run of one round would; one left with none is not
// measured.
func levelsUpTo(levels []Level, k int, reps replicateOf) []Level {
	out := slices.Clone(levels)
	for i := range out {
		l := &out[i]
		l.Launches = slices.DeleteFunc(slices.Clone(l.Launches), func(ll LaunchLevel) bool { return reps.of(ll.Round) > k })
		if len(l.Launches) == 1 {
			l.Samples = l.Launches[0].Samples
		}
	}
	return out
}

// campaignRounds are the rounds (replicates, when split) any scenario
// completed a launch in (failed or not), ascending: the rounds after which
// a look may be taken.
func campaignRounds(v *Verdict) []int {
	set := map[int]bool{}
	for _, s := range v.Scenarios {
		for _, l := range s.Launches {
			if !l.Cut() {
				set[v.replicate(l.Round)] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// upTo is the capacity verdict as it stood after replicate k: each scenario's
// capacity from its launches of rounds up to k, and each variant's
// comparison with the baseline on those rounds (undecided). The comparisons
// keep cv's order, so that an index names the same variant in both.
func (cv *CapacityVerdict) upTo(baseline string, k int, reps replicateOf, conf float64) *CapacityVerdict {
	out := &CapacityVerdict{SLO: cv.SLO, Objective: cv.Objective, Unit: cv.Unit}
	for _, s := range cv.Scenarios {
		s.Launches = slices.DeleteFunc(slices.Clone(s.Launches), func(l LaunchCapacity) bool { return reps.of(l.Round) > k })
		if len(s.Launches) == 0 {
			continue
		}
		s.Capacity, s.Bound = capacityEstimate(s.Launches, conf)
		out.Scenarios = append(out.Scenarios, s)
	}
	for _, cc := range cv.Comparisons {
		out.Comparisons = append(out.Comparisons, CapacityComparison{Variant: cc.Variant})
	}
	out.compare(baseline, conf)
	return out
}
