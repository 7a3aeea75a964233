package verdict_test

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/plan"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestForecastMatchesRule: the planner's forecast of the rounds a campaign
// of comparisons with no difference needs is within ±30% of the median
// rounds the sequential rule then took to close them all, over simulated
// campaigns of one comparison and of six (levels sharing their launches),
// at three noise sizes. The planner's target before this version (the
// fixed design's MDE over the family) asked for about twice the rounds of
// one comparison; a target of one comparison's median tie forecast half
// the rounds of a recorded demo night, which waits on its last tie.
func TestForecastMatchesRule(t *testing.T) {
	const maxRounds = 16
	for _, tc := range []struct {
		name     string
		launchSD float64
		levels   int
	}{
		{"one comparison, launches 1.2%", 0.012, 1},
		{"one comparison, launches 1.5%", 0.015, 1},
		{"one comparison, launches 1.8%", 0.018, 1},
		{"six levels, launches 1.2%", 0.012, 6},
		{"six levels, launches 1.5%", 0.015, 6},
		{"six levels, launches 1.8%", 0.018, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spent, dfPerRound := verdict.RoundsSpent(300, 11, tc.launchSD, 0.004, maxRounds, tc.levels)
			median := float64(spent[len(spent)/2])
			sd := math.Sqrt(2*tc.launchSD*tc.launchSD + 2*0.004*0.004) // one round's log ratio
			in := plan.Inputs{
				Levels:    []plan.Level{{Key: measure.ConcurrencyLevel(1), PerRequest: 1, Min: 1, Max: 1}},
				Launch:    600,
				Scenarios: 2,
				Noise:     []plan.Noise{{Level: 0, Launch: sd * sd}},
				Goal:      plan.Goal{MarginPct: verdict.DefaultEquivalenceMarginPct, Family: tc.levels, MinRounds: 3, MaxRounds: maxRounds, DFPerRound: dfPerRound},
			}
			p := plan.Next(in)
			t.Logf("%s: forecast %d rounds (%d launches), the rule took %.0f in the median (%.0f launches); df per round %.2f",
				tc.name, p.Rounds, 2*p.Rounds, median, 2*median, dfPerRound)
			if r := float64(p.Rounds) / median; r < 0.7 || r > 1.3 {
				t.Errorf("forecast %d rounds against %.0f taken in the median: a ratio of %.2f, want within ±30%%", p.Rounds, median, r)
			}
		})
	}
}
