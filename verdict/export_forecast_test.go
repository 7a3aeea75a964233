package verdict

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// RoundsSpent is, for the planner's forecast test (forecast_test.go, which
// imports plan and so cannot be in this package), the rounds the sequential
// rule took to close every one of levels comparisons with no true
// difference, in each of n simulated campaigns (simLevels' noise: each
// launch launchSD, shared by its levels, each level levelSD, no drift),
// plan {min: 3, max: maxRounds}, α = 0.05 and the default margin;
// plan.MaxRounds for a campaign left undecided. A campaign's night is its
// last comparison's. It also returns the pooled df per round past the
// first, averaged over the looks, for the planner's goal.
func RoundsSpent(n int, seed uint64, launchSD, levelSD float64, maxRounds, levels int) (rounds []int, dfPerRound float64) {
	plan := SequentialPlan{MinRounds: 3, MaxRounds: maxRounds}.Normalised()
	lo, hi := rule.TieBounds(DefaultEquivalenceMarginPct)
	rng := rand.New(rand.NewPCG(seed, 0xf0ca57))
	nz := sizeNoise{launchSD: launchSD, levelSD: levelSD}
	var dfSum float64
	dfN := 0
	for range n {
		b, v := simLevels(rng, nz, plan.MaxRounds, 0, levels)
		var looks []float64
		open := map[measure.Level]bool{}
		for _, l := range b {
			open[l.Level] = true
		}
		spent := plan.MaxRounds
		for k := plan.MinRounds; k <= plan.MaxRounds && len(open) > 0; k++ {
			cs, _ := compareLevels(levelsUpTo(b, k, nil), levelsUpTo(v, k, nil), true, DefaultConfidence, nil)
			looks = append(looks, float64(k)/float64(plan.MaxRounds))
			for key := range open {
				e := sequentialView(cs[key]).est
				dfSum += e.DF / float64(k-1)
				dfN++
				if plan.Rejects(e, looks, 0.05) || plan.Ties(e, looks, 0.05, lo, hi) {
					delete(open, key)
				}
			}
			if len(open) == 0 {
				spent = k
			}
		}
		rounds = append(rounds, spent)
	}
	slices.Sort(rounds)
	return rounds, dfSum / math.Max(float64(dfN), 1)
}
