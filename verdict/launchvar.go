package verdict

import (
	"math"
)

// The launch-to-launch variance of a levels × rounds table of log
// throughputs (or of their differences between two scenarios), shared by
// every comparison the verdict and diff make. docs/METHOD.md derives it.
//
// The model of one cell is
//
//	x[c][r] = μ_c + u_r + ε_cr
//
// where u_r is what launch (round) r shares across all its levels (a launch
// that came up 1% slow is slow at every level) and ε_cr is the rest (drift
// during the level, sampling noise). The variance of one cell about its
// level's mean, σ² = σ_u² + σ_ε², is what a level's mean over R rounds
// divides by R. Pooling the within-level sums of squares over all levels
// estimates σ² without bias; its degrees of freedom come from splitting that
// sum into the part the additive fit gives to the rounds (R−1 df, expectation
// C·σ_u² + σ_ε² per df in a full table) and the residual ((C−1)(R−1) df,
// σ_ε²), combined with Satterthwaite's approximation. When launch effects
// dominate the df fall towards R−1; when they are small the df approach
// C(R−1): all levels then help estimate one variance.

// launchVar is the pooled variance of one cell about its level's mean and
// its degrees of freedom.
type launchVar struct {
	// Var is σ_u² + σ_ε², in (log units)².
	Var float64
	// DF is Satterthwaite's degrees of freedom for Var; 0 when Var cannot be
	// estimated (no level was measured in two rounds).
	DF float64
	// RoundShare is the fraction of the pooled sum of squares the additive
	// fit gives to the rounds, 0 to 1: near 1 when launch effects dominate.
	RoundShare float64
}

// estimateLaunchVar fits the additive model to x (levels × rounds, NaN for a
// missing cell) and returns the pooled variance with its df.
func estimateLaunchVar(x [][]float64) launchVar {
	levels := len(x)
	rounds := 0
	for _, row := range x {
		rounds = max(rounds, len(row))
	}
	at := func(c, r int) (float64, bool) {
		if r >= len(x[c]) || math.IsNaN(x[c][r]) || math.IsInf(x[c][r], 0) {
			return 0, false
		}
		return x[c][r], true
	}
	// Within-level sum of squares: each level about its own mean.
	var ssWithin float64
	var n, levelsUsed int
	mean := make([]float64, levels)
	for c := range levels {
		var s float64
		k := 0
		for r := range rounds {
			if v, ok := at(c, r); ok {
				s += v
				k++
			}
		}
		if k == 0 {
			continue
		}
		mean[c] = s / float64(k)
		for r := range rounds {
			if v, ok := at(c, r); ok {
				ssWithin += (v - mean[c]) * (v - mean[c])
			}
		}
		n += k
		levelsUsed++
	}
	dfWithin := n - levelsUsed
	if dfWithin <= 0 {
		return launchVar{}
	}
	// The additive fit, by backfitting (exact for a full table after one
	// pass; a few dozen passes for a table with holes).
	lev := append([]float64(nil), mean...)
	round := make([]float64, rounds)
	for range 200 {
		var change float64
		for r := range rounds {
			var s float64
			k := 0
			for c := range levels {
				if v, ok := at(c, r); ok {
					s += v - lev[c]
					k++
				}
			}
			if k > 0 {
				nv := s / float64(k)
				change = math.Max(change, math.Abs(nv-round[r]))
				round[r] = nv
			}
		}
		for c := range levels {
			var s float64
			k := 0
			for r := range rounds {
				if v, ok := at(c, r); ok {
					s += v - round[r]
					k++
				}
			}
			if k > 0 {
				nv := s / float64(k)
				change = math.Max(change, math.Abs(nv-lev[c]))
				lev[c] = nv
			}
		}
		if change < 1e-13 {
			break
		}
	}
	var ssResid float64
	for c := range levels {
		for r := range rounds {
			if v, ok := at(c, r); ok {
				e := v - lev[c] - round[r]
				ssResid += e * e
			}
		}
	}
	roundsUsed, components := layoutShape(x, at)
	dfResid := n - levelsUsed - roundsUsed + components
	dfRound := dfWithin - dfResid
	ssRound := math.Max(ssWithin-ssResid, 0)
	ssResid = math.Min(ssResid, ssWithin)
	lv := launchVar{Var: ssWithin / float64(dfWithin)}
	if ssWithin > 0 {
		lv.RoundShare = ssRound / ssWithin
	}
	// Satterthwaite: Var = (ssRound + ssResid)/dfWithin is a sum of two
	// independent mean squares, each weighted by its share of the df.
	var den float64
	if dfRound > 0 {
		a := ssRound / float64(dfWithin)
		den += a * a / float64(dfRound)
	}
	if dfResid > 0 {
		a := ssResid / float64(dfWithin)
		den += a * a / float64(dfResid)
	}
	switch {
	case den > 0:
		lv.DF = math.Min(lv.Var*lv.Var/den, float64(dfWithin))
	default:
		lv.DF = float64(dfWithin) // every cell equal to its level's mean
	}
	return lv
}

// layoutShape counts the rounds with a measurement and the connected
// components of the levels × rounds bipartite graph (a level and a round are
// linked when the cell is measured); the additive fit loses one df per
// component.
func layoutShape(x [][]float64, at func(c, r int) (float64, bool)) (rounds, components int) {
	levels := len(x)
	width := 0
	for _, row := range x {
		width = max(width, len(row))
	}
	parent := make([]int, levels+width)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	used := make([]bool, levels+width)
	for c := range levels {
		for r := range width {
			if _, ok := at(c, r); ok {
				used[c], used[levels+r] = true, true
				parent[find(c)] = find(levels + r)
			}
		}
	}
	for i, u := range used {
		if !u {
			continue
		}
		if i >= levels {
			rounds++
		}
		if find(i) == i {
			components++
		}
	}
	return rounds, components
}
