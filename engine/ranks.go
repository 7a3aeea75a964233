package engine

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// RankCopy is a /metrics series that every rank of a group of scheduler
// processes writes alike, each under its own rank labels: the ranks run the
// same schedule on the same requests, so each one's copy is the group's
// whole figure and a sum over the label sets counts it once per rank.
// Readers count one copy per group (Counted); the groups themselves, such as
// SGLang's DP-attention ranks, hold requests of their own and are summed or
// averaged as any other label sets.
type RankCopy struct {
	// Name is the series' name as the exposition writes it.
	Name string
	// Ranks are the labels that tell the group's ranks apart, most
	// significant first. Label sets that differ only in them are one
	// group's copies, and the lowest-ranked one is read.
	Ranks []string
}

// knownRankCopies are every engine's RankCopies (generic lists them all),
// for readers that parse a scrape before they know its engine: a series'
// name says whose it is.
var knownRankCopies = genericServer.RankCopies

// Counted reports, for the label sets a scrape or a timeline carries under
// one series name, which of them a figure reads: all of them, but for a
// series ranks write alike (ServerMetrics.RankCopies) only the lowest-ranked
// copy in each group.
func Counted(name string, sets []map[string]string) []bool {
	keep := make([]bool, len(sets))
	i := slices.IndexFunc(knownRankCopies, func(c RankCopy) bool { return c.Name == name })
	if i < 0 {
		for k := range keep {
			keep[k] = true
		}
		return keep
	}
	ranks := knownRankCopies[i].Ranks
	lowest := map[string]int{} // group → the index of its lowest-ranked copy
	for k, set := range sets {
		g := group(set, ranks)
		if j, ok := lowest[g]; !ok || rankBefore(set, sets[j], ranks) {
			lowest[g] = k
		}
	}
	for _, k := range lowest {
		keep[k] = true
	}
	return keep
}

// group is a label set without its rank labels, as one string.
func group(set map[string]string, ranks []string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if !slices.Contains(ranks, k) {
			b.WriteString(k + "=" + set[k] + "\xff")
		}
	}
	return b.String()
}

// rankBefore reports whether a's ranks come before b's: compared label by
// label, as numbers where both are (SGLang writes ranks as integers).
func rankBefore(a, b map[string]string, ranks []string) bool {
	for _, r := range ranks {
		x, y := a[r], b[r]
		if x == y {
			continue
		}
		nx, errX := strconv.Atoi(x)
		ny, errY := strconv.Atoi(y)
		if errX == nil && errY == nil {
			return nx < ny
		}
		return x < y
	}
	return false
}
