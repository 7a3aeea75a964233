package selection

import (
	"fmt"
	"math"
)

const (
	// DefaultDelta is the indifference zone: two configurations within it
	// are as good as each other. It is the campaign's default equivalence
	// margin (campaign.DefaultEquivalenceMarginPct, 2%), the difference
	// users do not act on; the package keeps its own copy so that it needs
	// nothing of the campaign's loader.
	DefaultDelta = 0.02
	// DefaultPCS is the probability of correct selection asked for at each
	// level.
	DefaultPCS = 0.95
	// Confidence is the level of the intervals of the advantage and the
	// envelope.
	Confidence = 0.95
	// minFirstStageDF is the least degrees of freedom the default first
	// stage gives the pooled variance. Below about ten, h² grows fast (at
	// 24 configurations: 13.9 at 23 df, 16.0 at 15, 19.7 at 10, 10.9 with a
	// known variance), and every elimination waits for it.
	minFirstStageDF = 10
)

// Options are the procedure's parameters; the zero value is the defaults.
type Options struct {
	// Delta is the indifference zone as a fraction of throughput (0.02: a
	// configuration within 2% of the best is as good as the best). 0 means
	// DefaultDelta.
	Delta float64 `json:"delta"`
	// PCS is the probability of correct selection guaranteed at each level
	// when the best leads every other configuration by Delta or more. 0 means
	// DefaultPCS.
	PCS float64 `json:"pcs"`
	// FirstStage is n0, the rounds every configuration is launched before
	// any is eliminated; they estimate the launch-to-launch variance. 0
	// means DefaultFirstStage of the number of configurations.
	FirstStage int `json:"first_stage"`
	// MaxRounds caps the race; 0 leaves it to end by itself, which it does
	// once the allowance reaches zero (LevelResult.CloseRound).
	MaxRounds int `json:"max_rounds,omitempty"`
	// LoadLevels is how many of the levels, from the first, are loads: the
	// envelope and the best single configuration are over those alone. A
	// level after them is raced like any other, but is another figure of
	// the configuration (its SLO capacity), not a load it could be served
	// at. 0 means every level is a load.
	LoadLevels int `json:"load_levels,omitempty"`
}

// DefaultFirstStage is the first stage for k configurations: two rounds,
// or more when two would give the pooled variance fewer than ten degrees of
// freedom ((k−1)(n0−1), so more for fewer than 11 configurations).
func DefaultFirstStage(k int) int {
	if k < 2 {
		return 2
	}
	return max(2, 1+(minFirstStageDF+k-2)/(k-1))
}

// normalise fills the defaults for k configurations and checks the rest.
func (o Options) normalise(k int) (Options, error) {
	if o.Delta == 0 {
		o.Delta = DefaultDelta
	}
	if o.PCS == 0 {
		o.PCS = DefaultPCS
	}
	if o.FirstStage == 0 {
		o.FirstStage = DefaultFirstStage(k)
	}
	switch {
	case !(o.Delta > 0 && o.Delta < 1):
		return o, fmt.Errorf("delta %g: want a fraction between 0 and 1", o.Delta)
	case !(o.PCS > 1/float64(k) && o.PCS < 1):
		return o, fmt.Errorf("pcs %g: want between 1/%d (a guess) and 1", o.PCS, k)
	case o.FirstStage < 2:
		return o, fmt.Errorf("first stage of %d rounds: the variance needs at least 2", o.FirstStage)
	case o.MaxRounds < 0 || (o.MaxRounds > 0 && o.MaxRounds < o.FirstStage):
		return o, fmt.Errorf("max rounds %d: want 0 (none) or at least the first stage's %d", o.MaxRounds, o.FirstStage)
	}
	return o, nil
}

// h2 is the constant of the continuation region for k configurations, a
// pooled variance with df degrees of freedom and probability pcs: KN's
// h² = 2η(n0−1) with η from ½(1+2η)^(−ν/2) = β, β = (1−pcs)/(k−1), and ν
// the pool's df where KN has n0−1 (docs/METHOD.md derives it):
//
//	h² = ν·((2β)^(−2/ν) − 1)
func h2(k, df int, pcs float64) float64 {
	beta := (1 - pcs) / float64(k-1)
	nu := float64(df)
	return nu * math.Expm1(-2/nu*math.Log(2*beta))
}

// allowance is KN's W(r): how far below the leader a configuration may
// fall after r rounds and stay live, in log throughput, for a pooled
// variance of one launch s2 (a pair's difference has variance 2·s2). It
// shrinks as 1/r and reaches zero at r = h²·2·s2/δ², where the race at that
// level closes.
func allowance(r int, h2, s2, delta float64) float64 {
	rr := float64(r)
	return max(0, delta/(2*rr)*(h2*2*s2/(delta*delta)-rr))
}

// closeRound is the first round at which the allowance is zero.
func closeRound(h2, s2, delta float64) int {
	return max(1, int(math.Ceil(h2*2*s2/(delta*delta))))
}

// GuaranteeRounds is the round by which a race of k configurations, with a
// first stage of firstStage rounds and a round's paired log difference of
// variance pairVar (a host's noise profile, before any round measured it),
// closes a level by its allowance alone: where the guarantee ends a level
// that near-tied configurations keep open. A planner's figure: the race
// itself uses the first stage's own variance.
func GuaranteeRounds(k, firstStage int, pcs, delta, pairVar float64) int {
	o, err := Options{PCS: pcs, Delta: delta, FirstStage: firstStage}.normalise(k)
	if err != nil || k < 2 || !(pairVar > 0) {
		return 0
	}
	return closeRound(h2(k, (k-1)*(o.FirstStage-1), o.PCS), pairVar/2, o.Delta)
}

// RaceRounds is the rounds a race may run in a campaign of lastRound
// rounds: every round but the last, which is kept for the confirmation
// round; a campaign of two rounds or fewer has none to spare, and races
// two.
func RaceRounds(lastRound int) int {
	r := max(lastRound, 2)
	if r >= 3 {
		r--
	}
	return r
}
