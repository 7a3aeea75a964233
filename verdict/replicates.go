package verdict

import (
	"maps"
	"slices"
)

// Split rounds. A fleet with more hosts than rounds lays each round out as
// several results rounds, its parts (campaign.SplitLayout): each holds the
// baseline and a share of the variants and runs whole on one host. The
// manifest maps each results round to its replicate (the round the campaign
// asked for). Pairing by results round is then pairing each variant with
// the baseline launched on its host in its part, so the comparisons with
// the baseline need nothing new; what changes is the counting. A variant
// has one launch per replicate, the baseline one per part, and the rounds
// the verdict speaks of (Rounds, RoundsCompleted, the notes, the looks of
// a sequential plan and their information fraction) are replicates: the
// baseline's extra launches are not more rounds, and a part is not a
// shortfall. Two variants that never share a part are compared through the
// baseline (throughBaseline).

// replicateOf maps each results round to its replicate; nil when the
// rounds were not split.
type replicateOf map[int]int

// newReplicateOf reads the manifest's mapping (index k is round k+1).
func newReplicateOf(reps []int) replicateOf {
	if len(reps) == 0 {
		return nil
	}
	m := replicateOf{}
	for k, r := range reps {
		m[k+1] = r
	}
	return m
}

// of is the replicate of results round k: k itself when not split.
func (m replicateOf) of(k int) int {
	if r, ok := m[k]; ok {
		return r
	}
	return k
}

// replicate is the replicate of results round k.
func (v *Verdict) replicate(k int) int { return v.replicates.of(k) }

// Split reports whether the run's rounds were split into parts.
func (v *Verdict) Split() bool { return v.replicates != nil }

// ReplicatesWhere counts the replicates in which the scenario has a launch
// and every launch it has there satisfies ok: for a variant (one launch a
// replicate) its launches, for the baseline the replicates whose every
// part's launch did.
func (v *Verdict) ReplicatesWhere(s *Scenario, ok func(LaunchInfo) bool) int {
	all := map[int]bool{}
	for _, l := range s.Launches {
		r := v.replicate(l.Round)
		if _, seen := all[r]; !seen {
			all[r] = true
		}
		all[r] = all[r] && ok(l)
	}
	n := 0
	for _, good := range all {
		if good {
			n++
		}
	}
	return n
}

// completedReplicates is Completed counted in replicates: those in which
// every launch of the scenario ran to its end, failed or not.
func (v *Verdict) completedReplicates(s *Scenario) int {
	return v.ReplicatesWhere(s, func(l LaunchInfo) bool { return !l.Cut() })
}

// throughBaseline returns, for a variant's levels, each launch's throughput
// over the baseline's in the same results round (its part, on its host),
// labelled by replicate: two variants in different parts of a replicate
// share no results round, but each shares one with a baseline launch on
// its own host, so the difference of their ratios to those is paired by
// replicate and no host's speed enters it. For two variants of one part it
// is their direct log ratio, the baseline cancelling. A launch with no
// baseline launch in its round is left out.
func (v *Verdict) throughBaseline(ls, base []Level) []Level {
	out := make([]Level, 0, len(ls))
	for _, l := range ls {
		i := slices.IndexFunc(base, func(b Level) bool { return b.Level == l.Level })
		if i < 0 {
			continue
		}
		byRound := map[int]LaunchLevel{}
		for _, b := range base[i].Launches {
			if b.Throughput > 0 {
				byRound[b.Round] = b
			}
		}
		r := l
		r.Samples = nil
		r.Launches = nil
		for _, ll := range l.Launches {
			b, ok := byRound[ll.Round]
			if !ok || ll.Throughput <= 0 || (ll.Host != "" && b.Host != "" && ll.Host != b.Host) {
				continue
			}
			r.Launches = append(r.Launches, LaunchLevel{Round: v.replicate(ll.Round), Order: ll.Order,
				Throughput: ll.Throughput / b.Throughput})
		}
		out = append(out, r)
	}
	return out
}

// sharesRound reports whether two scenarios have a launch in one results
// round: in a split layout, whether they share a part.
func sharesRound(a, b []Level) bool {
	ra := roundIndex(a)
	for r := range roundIndex(b) {
		if _, ok := ra[r]; ok {
			return true
		}
	}
	return false
}

// parts is how many results rounds the replicates were split into, the
// most any replicate has; 0 when not split.
func (m replicateOf) parts() int {
	if m == nil {
		return 0
	}
	count := map[int]int{}
	for _, r := range m {
		count[r]++
	}
	return slices.Max(slices.Collect(maps.Values(count)))
}
