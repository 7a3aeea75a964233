package verdict

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// The sequential rule (docs/METHOD.md, "Sequential rounds"). A campaign with
// a sequential plan looks at its comparisons after every round from
// MinRounds to MaxRounds, and each comparison closes at the first look that
// decides it; a variant whose comparisons are all closed is launched no
// more. The verdict stays a pure function of the records: it replays the
// looks, each on the rounds it had.
//
//   - Each comparison's test spends its share of alpha over its looks by the
//     Lan–DeMets O'Brien–Fleming-type function of the information fraction
//     R/MaxRounds (rule/spending.go), and a look's z boundary is applied to the t
//     statistic at the same nominal level with the look's pooled df.
//   - The family is corrected by Holm's procedure made sequential (Maurer &
//     Bretz 2013): each unrejected comparison is tested at alpha over the
//     number still unrejected, with boundaries computed at that level for
//     every look it has taken; a rejection passes its level on to the rest.
//   - A tie is the (1 − 2α) repeated confidence interval (Jennison & Turnbull
//     2000, ch. 9) inside ±equivalence_margin at a look.
//   - The interval reported is the repeated confidence interval at the look
//     that closed the comparison, or the last look taken: it holds the truth
//     at every look at once with the stated confidence, so it does after any
//     stopping rule.

// SequentialPlan is a campaign's sequential design (rule.Plan): at least
// MinRounds rounds, at most MaxRounds, a look after each round from
// MinRounds on.
type SequentialPlan = rule.Plan

// sequentialView is c as the sequential rule tests it: its estimate widened
// for the correlation of consecutive rounds (rule.Diff.Widened).
func sequentialView(c *Comparison) *Comparison {
	if c.serial <= 0 {
		return c
	}
	cc := *c
	cc.est = c.est.Widened(c.serial)
	if c.own.OK() {
		cc.own = c.own.Widened(c.serial)
	}
	return &cc
}

// hypothesis is one comparison of the family followed through the looks.
type hypothesis struct {
	key      pairKey // a throughput comparison; unused for a capacity
	capacity int     // index into the capacity comparisons, or −1
	// looks are the information fractions of the looks taken; n the rounds
	// at the latest.
	looks []float64
	n     int
	// at is the comparison at the latest look (before any look: on the
	// latest data), after round atRound.
	at      Comparison
	atRound int
	// base and variant are the two capacities at the latest look, which
	// settle whether a capacity may be called (SettleCapacity).
	base, variant *ScenarioCapacity
	// rejected: Holm rejected no difference, and the level passed on; alive
	// is how many hypotheses were unrejected when it was last tested (its
	// level was alpha/alive). passed: the test at that level rejected,
	// whether or not the capacity bounds let it be called (a call they
	// forbid is not a rejection). pAdj is the Holm-adjusted p of that test at
	// its look (holmLook).
	rejected, passed bool
	alive            int
	pAdj             float64
	// closed: decided, or out of looks; decided: faster, slower or tie;
	// lasting: closed at a look that doubted it for a reason no later
	// round can clear (Doubt.Lasting).
	closed, decided, lasting bool
	closedAt                 int
}

// t is the hypothesis's t statistic at its latest look.
func (h *hypothesis) t() float64 { return rule.TStat(h.at.est) }

// callable reports whether the capacity bounds let the comparison be called
// outcome (always, for a throughput).
func (h *hypothesis) callable(outcome string) bool {
	if h.capacity < 0 {
		return true
	}
	c := h.at
	c.Outcome = outcome
	SettleCapacity(&c, h.base, h.variant)
	return c.Outcome == outcome
}

func (h *hypothesis) direction() string {
	if h.at.est.D > 0 {
		return OutcomeFaster
	}
	return OutcomeSlower
}

// compareSequential replays the looks of plan over the run's rounds and
// decides every comparison at the look that closes it.
func compareSequential(v *Verdict, plan SequentialPlan) {
	plan = plan.Normalised()
	_, keys, mixed := comparePairs(v, 0)
	v.MixedHosts = mixed
	// A comparison doubted over every launch is a member of the family
	// too: whether a look doubts it depends on the launches that look saw
	// (doubtsUpTo), so the family is every comparison and a look skips the
	// ones it doubts, as a live look after that round did. A replay then
	// tests each comparison at the level the run tested it at, and the
	// report decides what the run decided.
	for k := range v.doubted {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, pairKey.compare)
	var hs []*hypothesis
	for _, k := range keys {
		hs = append(hs, &hypothesis{key: k, capacity: -1})
	}
	if cv := v.Capacity; cv != nil {
		for i := range cv.Comparisons {
			if cv.Comparisons[i].est.OK() {
				hs = append(hs, &hypothesis{capacity: i})
			}
		}
	}
	v.Comparisons = len(hs)
	v.CapacityComparisons = len(hs) - len(keys)
	alive := len(hs)
	tieLo, tieHi := rule.TieBounds(v.EquivalenceMarginPct)
	for _, k := range campaignRounds(v) {
		pairs, _, _ := comparePairs(v, k)
		var cvk *CapacityVerdict
		if v.Capacity != nil {
			cvk = v.Capacity.upTo(v.Baseline, k, v.replicates, v.Confidence)
		}
		var now []*hypothesis
		for _, h := range hs {
			if h.closed {
				continue
			}
			c := pairs[h.key]
			if h.capacity >= 0 {
				c = &cvk.Comparisons[h.capacity].Comparison
				h.base, h.variant = cvk.scenario(v.Baseline), cvk.scenario(cvk.Comparisons[h.capacity].Variant)
			}
			if c == nil {
				continue
			}
			if c.Outcome == OutcomeDoubted {
				// Doubted at this look. A doubt that no later round can
				// clear (Lasting: the warm side's cache reset never
				// worked) closes the comparison at its first look, so
				// it does not keep its variant launching to the
				// maximum for nothing.
				if Lasting(c.Doubts) && c.Rounds >= plan.MinRounds {
					h.at, h.atRound = *c, k
					h.closed, h.closedAt, h.lasting = true, k, true
				}
				continue
			}
			c = sequentialView(c)
			look := c.est.OK() && c.Method == MethodLaunches && c.Rounds >= plan.MinRounds &&
				c.Rounds > h.n && c.Rounds <= plan.MaxRounds
			if !look {
				if len(h.looks) == 0 {
					h.at, h.atRound = *c, k
				}
				continue
			}
			h.looks = append(h.looks, float64(c.Rounds)/float64(plan.MaxRounds))
			h.n, h.at, h.atRound = c.Rounds, *c, k
			now = append(now, h)
		}
		alive = holmLook(plan, v.Alpha, now, alive)
		for _, h := range now {
			tie := plan.Ties(h.at.judged(plan, h.looks, 2*v.Alpha), h.looks, v.Alpha, tieLo, tieHi) && h.callable(OutcomeTie)
			switch {
			case tie:
				h.at.Outcome = OutcomeTie
			case h.rejected:
				h.at.Outcome = h.direction()
			}
			if tie || h.rejected {
				h.closed, h.decided, h.closedAt = true, true, k
			} else if h.n >= plan.MaxRounds {
				h.closed, h.closedAt = true, k
			}
		}
		// A variant stopped at this look gets no more launches, so its
		// comparisons with other variants take no more looks either: a look
		// on launches a stopped variant would not have had would decide on
		// data a campaign does not hold, and its rejection would pass α on.
		settleOpen(v, hs, k)
		if k >= plan.MaxRounds {
			// The last round: a comparison no look could test (doubted at
			// every look) is out of rounds too, and must not hold its
			// variant "open" after a campaign that launches no more.
			for _, h := range hs {
				if !h.closed {
					h.closed, h.closedAt = true, k
				}
			}
		}
	}
	pairs := map[pairKey]*Comparison{}
	for _, h := range hs {
		if len(h.looks) == 0 {
			// Never tested: shown at the level it would be tested at now.
			h.alive = alive
		}
		c := finishHypothesis(v, plan, h, len(hs))
		if h.capacity >= 0 {
			v.Capacity.Comparisons[h.capacity].Comparison = c
			continue
		}
		if h.decided {
			// Decided at a look that did not doubt it: the run acted on
			// that decision (the variant may have stopped), and a doubt
			// that later launches raised does not undo it.
			delete(v.doubted, h.key)
		} else if d, ok := v.doubted[h.key]; ok {
			// Doubted, and still open: it keeps its variant launching, so
			// the planner sizes the next rounds for it too, in case the
			// doubt clears (the estimate and its noise stay in the cell).
			d.Open = !h.closed
		}
		pairs[h.key] = &c
	}
	buildRows(v, pairs)
	v.Sequential = stopping(v, plan, hs)
	sequentialRounds(v)
}

// holmLook is Holm's procedure made sequential at one look (Maurer & Bretz
// 2013): each unrejected hypothesis of now is tested at alpha over the
// number still unrejected, alive, and a rejection raises the others' level,
// which may reject another at this look. They are tested in the order of
// their repeated p-values, smallest first, so that each records the level
// Holm's step-down tests it at, and its adjusted p, alive times its repeated
// p, is at least that of every rejection before it at this look: Holm's
// adjusted p at the look that decided it, below alpha exactly when the test
// rejected. It is not raised to the rejections of earlier looks: their
// largest, some earlier look's close call, would otherwise be the p of every
// later decision, whatever its own evidence. Which hypotheses are rejected
// does not depend on the order. It returns how many are left unrejected.
func holmLook(plan SequentialPlan, alpha float64, now []*hypothesis, alive int) int {
	ps := map[*hypothesis]float64{}
	for _, h := range now {
		ps[h] = plan.RepeatedP(h.at.judged(plan, h.looks, alpha/float64(alive)), h.looks, 0)
	}
	now = slices.Clone(now)
	slices.SortStableFunc(now, func(a, b *hypothesis) int { return cmp.Compare(ps[a], ps[b]) })
	adjusted := 0.0 // the largest adjusted p among this look's rejections so far
	for changed := true; changed; {
		changed = false
		for _, h := range now {
			if h.rejected {
				continue
			}
			level := alpha / float64(alive)
			h.alive = alive
			h.passed = plan.Rejects(h.at.judged(plan, h.looks, level), h.looks, level)
			if h.passed && h.callable(h.direction()) {
				// A rejection's adjusted p is needed now, in order: it
				// raises the floor of every later one at this look. An
				// unrejected hypothesis's is only shown, and
				// finishHypothesis computes it once from its last test
				// (h.alive), rather than at every pass of every look.
				h.pAdj = math.Max(adjustedP(plan, h, alpha), adjusted)
				h.rejected, changed = true, true
				adjusted = h.pAdj
				alive--
			}
		}
	}
	return alive
}

// adjustedP is h's Holm-adjusted repeated p at its latest test: the number
// unrejected then (h.alive) times its repeated p at that test's level.
func adjustedP(plan SequentialPlan, h *hypothesis, alpha float64) float64 {
	alive := max(h.alive, 1)
	level := alpha / float64(alive)
	return math.Min(1, float64(alive)*plan.RepeatedP(h.at.judged(plan, h.looks, level), h.looks, level))
}

// settleOpen closes, undecided, after the look at round k, the comparisons
// between two variants that can get no more data because one of them
// stopped: only a comparison with the baseline keeps a variant launching.
func settleOpen(v *Verdict, hs []*hypothesis, k int) {
	base := v.baselineIndex()
	open := map[int]bool{}
	for _, h := range hs {
		if h.capacity < 0 && h.key.i == base && !h.closed {
			open[h.key.j] = true
		}
		if h.capacity < 0 && h.key.j == base && !h.closed {
			open[h.key.i] = true
		}
		if h.capacity >= 0 && !h.closed {
			if i := v.scenarioIndex(v.Capacity.Comparisons[h.capacity].Variant); i >= 0 {
				open[i] = true
			}
		}
	}
	for _, h := range hs {
		if h.closed || h.capacity >= 0 || h.key.i == base || h.key.j == base {
			continue
		}
		if !open[h.key.i] || !open[h.key.j] {
			h.closed, h.closedAt = true, k
		}
	}
}

// finishHypothesis is the comparison a hypothesis reports: its estimate at
// the look that closed it (or the latest), the repeated confidence interval
// there, the repeated p-value and the outcome. m is the family's size.
func finishHypothesis(v *Verdict, plan SequentialPlan, h *hypothesis, m int) Comparison {
	c := h.at
	c.Decided, c.Open = h.decided, !h.closed
	if h.decided {
		c.DecidedAtRound = h.closedAt
	} else {
		c.Outcome = OutcomeInconclusive
	}
	c.Significant = h.passed
	c.BelowMinEffect = false
	looks := h.looks
	if len(looks) == 0 && c.est.OK() && c.Method == MethodLaunches {
		// No look yet: the interval as the first look would give it.
		looks = []float64{math.Min(1, float64(c.Rounds)/float64(plan.MaxRounds))}
	}
	if len(looks) == 0 {
		// One launch a side, or no error estimate: no test, the fixed
		// interval, never a decision.
		c.MDEPct = 0
		c.PAdjusted = 1
		return c
	}
	// Each interval and test takes the estimate its level takes at these
	// looks (judged: the profile's loan where it narrows the boundary).
	e := c.judged(plan, looks, 1-v.Confidence)
	if crit := plan.Critical(1-v.Confidence, looks, e.DF); !math.IsInf(crit, 1) {
		c.SpeedupLo, c.SpeedupHi = math.Exp(e.D-crit*e.SE), math.Exp(e.D+crit*e.SE)
	} else {
		c.SpeedupLo, c.SpeedupHi = 0, math.Inf(1)
	}
	// The interval the outcome was decided on: a win's or loss's at the level
	// its test was passed at, a tie's or an undecided one's at 1 − 2α.
	level := 2 * v.Alpha
	if c.Outcome == OutcomeFaster || c.Outcome == OutcomeSlower {
		level = v.Alpha / float64(max(h.alive, 1))
	}
	c.OutcomeConfidence = 1 - level
	e = c.judged(plan, looks, level)
	if crit := plan.Critical(level, looks, e.DF); !math.IsInf(crit, 1) {
		c.OutcomeLo, c.OutcomeHi = math.Exp(e.D-crit*e.SE), math.Exp(e.D+crit*e.SE)
	} else {
		c.OutcomeLo, c.OutcomeHi = 0, math.Inf(1)
	}
	c.P = plan.RepeatedP(c.judged(plan, looks, v.Alpha/float64(max(h.alive, 1))), looks, 0)
	c.PAdjusted = h.pAdj
	if !h.rejected && len(h.looks) > 0 {
		c.PAdjusted = adjustedP(plan, h, v.Alpha)
	}
	if len(h.looks) == 0 {
		c.PAdjusted = math.Min(1, c.P*float64(max(h.alive, 1)))
	}
	c.MDEPct = 0
	mde := v.Alpha / float64(max(m, 1))
	e = c.judged(plan, looks, mde)
	if crit := plan.Critical(mde, looks, e.DF); !math.IsInf(crit, 1) {
		power := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: e.DF}.Quantile(DefaultPower)
		c.MDEPct = pctOf((crit + power) * e.SE)
	}
	return c
}

func (v *Verdict) baselineIndex() int { return v.scenarioIndex(v.Baseline) }

func (v *Verdict) scenarioIndex(name string) int {
	for i := range v.Scenarios {
		if v.Scenarios[i].Name == name {
			return i
		}
	}
	return -1
}
