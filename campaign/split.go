package campaign

import "slices"

// Rounds split over a fleet. A fleet places whole rounds, one per host, so
// a campaign of R rounds keeps at most R hosts busy: 100 scenarios × 3
// rounds on 16 hosts leave 13 idle, and the night lasts a whole round of
// 100 launches. When the fleet has more hosts than rounds, each round (a
// replicate: every scenario launched once) is laid out as several smaller
// results rounds, its parts: each part holds the baseline and a share of
// the variants, and runs whole on one host like any round. Pairing by
// round then pairs each variant with the baseline launched on its host in
// its part, so the verdict's pairing (and the host as a block) is
// unchanged; the baseline is launched once per part.

// Layout is a campaign's launch sequence as results rounds.
type Layout struct {
	// Order is each results round's scenario names, in launch order.
	Order [][]string
	// Replicates gives the replicate (1-based) of each results round:
	// Replicates[k] is that of round k+1. Nil when the rounds are not
	// split, each round its own replicate.
	Replicates []int
}

// Parts is how many results rounds replicate r was split into (1 when not
// split).
func (l Layout) Parts(r int) int {
	if l.Replicates == nil {
		return 1
	}
	n := 0
	for _, x := range l.Replicates {
		if x == r {
			n++
		}
	}
	return n
}

// SplitLayout lays the scenarios out over rounds replicates for a fleet of
// hosts. Each replicate is split into the number of parts that makes the
// shortest night, estimated in launches one host runs in a row with every
// launch equally long; the variants (names less baseline, in campaign
// order) are dealt to the parts round-robin, the same way in every
// replicate, so two variants that share a part share it every time and
// are paired by round with each other too. Each part's launches follow the
// counterbalanced order of its own scenarios (LaunchOrder, the replicate's
// row). The rounds are replicate by replicate, so a scheduler that takes
// them in order runs the first replicate first.
//
// One host, no more hosts than rounds, or no split that shortens the night
// keeps LaunchOrder's layout exactly.
func SplitLayout(names []string, baseline string, rounds, hosts int) Layout {
	rounds = max(rounds, 1)
	plain := Layout{Order: LaunchOrder(names, rounds)}
	var variants []string
	for _, n := range names {
		if n != baseline {
			variants = append(variants, n)
		}
	}
	if hosts <= rounds || hosts < 2 || len(variants) < 2 || !slices.Contains(names, baseline) {
		return plain
	}
	parts, best := 1, splitMakespan(len(variants), rounds, hosts, 1)
	for p := 2; p <= len(variants); p++ {
		if m := splitMakespan(len(variants), rounds, hosts, p); m < best {
			parts, best = p, m
		}
	}
	if parts == 1 {
		return plain
	}
	members := make([][]string, parts)
	for i, v := range variants {
		members[i%parts] = append(members[i%parts], v)
	}
	var out Layout
	for r := 1; r <= rounds; r++ {
		for _, m := range members {
			var part []string // campaign order: the baseline where it stands
			for _, n := range names {
				if n == baseline || slices.Contains(m, n) {
					part = append(part, n)
				}
			}
			out.Order = append(out.Order, LaunchOrder(part, r)[r-1])
			out.Replicates = append(out.Replicates, r)
		}
	}
	return out
}

// splitMakespan is the night of a split into parts parts per replicate, in
// launches one host runs in a row: the hosts take the rounds parts ×
// rounds at a time, each part the baseline and its share of the variants.
func splitMakespan(variants, rounds, hosts, parts int) int {
	waves := (rounds*parts + hosts - 1) / hosts
	return waves * (1 + (variants+parts-1)/parts)
}

// Layout is the campaign's launch sequence on a fleet of hosts
// (SplitLayout; one host for a campaign that is not a fleet).
func (c *Campaign) Layout(hosts int) Layout {
	names := make([]string, len(c.Scenarios))
	for i, s := range c.Scenarios {
		names[i] = s.Name
	}
	return SplitLayout(names, c.Baseline, max(c.Rounds, 1), hosts)
}

// Launches counts the layout's launches: scenarios × rounds, and when split
// the baseline's launch in every part.
func (l Layout) Launches() int {
	n := 0
	for _, row := range l.Order {
		n += len(row)
	}
	return n
}

// Serial is how many launches one host runs in a row when hosts take the
// rounds in order, each to the first host free, every launch equally long:
// the night in launches.
func (l Layout) Serial(hosts int) int {
	busy := make([]int, max(hosts, 1))
	for _, row := range l.Order {
		i := 0
		for j := range busy {
			if busy[j] < busy[i] {
				i = j
			}
		}
		busy[i] += len(row)
	}
	return slices.Max(busy)
}
