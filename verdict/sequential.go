package verdict

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
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
//     R/MaxRounds (spending.go), and a look's z boundary is applied to the t
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

// SequentialPlan is a campaign's sequential design: at least MinRounds
// rounds, at most MaxRounds, a look after each round from MinRounds on.
type SequentialPlan struct {
	MinRounds, MaxRounds int
}

// DefaultMinRounds is the fewest rounds before the first look of a plan
// that names none: three is the fewest that can decide (docs/METHOD.md, "The
// model": with two rounds the launch-to-launch variance has one df, and no
// boundary can be met).
const DefaultMinRounds = 3

// normalised is the plan with an unset MinRounds (under 2, which no campaign
// can ask for: a variance needs two rounds) at DefaultMinRounds, and
// MaxRounds at least MinRounds. A MinRounds of 2 is kept as the campaign
// asked (campaign.MinSequentialRounds): its first look decides nothing and
// spends next to nothing (α(2/12) is 1.6·10⁻⁶ at α = 0.05), so it costs the
// later looks nothing a campaign would notice.
func (p SequentialPlan) normalised() SequentialPlan {
	if p.MinRounds < 2 {
		p.MinRounds = DefaultMinRounds
	}
	p.MaxRounds = max(p.MaxRounds, p.MinRounds)
	return p
}

// schedule is the plan's information fractions, R/MaxRounds for R from
// MinRounds to MaxRounds: the looks a comparison with a launch in every
// round takes.
func (p SequentialPlan) schedule() []float64 {
	var out []float64
	for r := p.MinRounds; r <= p.MaxRounds; r++ {
		out = append(out, float64(r)/float64(p.MaxRounds))
	}
	return out
}

// lookLevel is the nominal two-sided level of the last of looks for a test
// spending alpha. Looks that begin the plan's schedule (every comparison
// whose rounds all completed) share the schedule's boundaries; others (a
// failed launch skipped a look) get their own.
func (p SequentialPlan) lookLevel(alpha float64, looks []float64) float64 {
	if len(looks) == 0 {
		return 0
	}
	sched := p.schedule()
	prefix := len(looks) <= len(sched)
	for i := 0; prefix && i < len(looks); i++ {
		prefix = looks[i] == sched[i]
	}
	if prefix {
		return sequentialLevels(alpha, sched)[len(looks)-1]
	}
	return sequentialLevels(alpha, looks)[len(looks)-1]
}

// critical is the critical |t| at the last of looks, df degrees of freedom,
// for a test spending alpha: the t quantile at the look's nominal level.
func (p SequentialPlan) critical(alpha float64, looks []float64, df float64) float64 {
	lvl := p.lookLevel(alpha, looks)
	if df <= 0 || lvl <= 0 {
		return math.Inf(1)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - lvl/2)
}

// repeatedP is the repeated p-value of e at the last of looks: the smallest
// alpha at which the boundary of that look rejects (Jennison & Turnbull
// 2000, §9.5), found on a grid of levels, interpolated log-linearly, and
// only as fine as the grid (the tests use the boundaries themselves).
// tested, when above 0, is a level the comparison was tested at, taken into
// the grid as a node: the interpolation is monotone, so the value is at most
// tested exactly when that level's boundary rejects, and a p shown beside a
// decision cannot contradict it.
func (p SequentialPlan) repeatedP(e logDiff, looks []float64, tested float64) float64 {
	if !e.ok() || len(looks) == 0 {
		return 1
	}
	nominal := e.P() // the t statistic's two-sided level
	if nominal >= 1 {
		return 1
	}
	const decades, perDecade = 8, 6
	grid := make([]float64, 0, decades*perDecade+2)
	for i := decades * perDecade; i >= 0; i-- {
		grid = append(grid, math.Pow(10, -float64(i)/perDecade))
	}
	if tested > 0 && tested < 1 {
		at, _ := slices.BinarySearch(grid, tested)
		grid = slices.Insert(grid, at, tested)
	}
	prevA, prevL := 0.0, 0.0
	for _, a := range grid {
		l := p.lookLevel(a, looks)
		if l >= nominal {
			if prevA == 0 || l == prevL || prevL <= 0 {
				return a
			}
			f := (math.Log(nominal) - math.Log(prevL)) / (math.Log(l) - math.Log(prevL))
			return math.Exp(math.Log(prevA) + f*(math.Log(a)-math.Log(prevA)))
		}
		prevA, prevL = a, l
	}
	return 1
}

// sequentialView is c as the sequential rule tests it: its standard error
// widened by the correlation of consecutive rounds (serialInflation) and by
// serialMargin for that correlation's own noise. The fixed design reads its
// rounds once, at the end, and an even number of counterbalanced rounds
// leaves it less exposed; the sequential rule looks after every round, and a
// single comparison under a wandering drift was called at 7–8% of A/A
// sequences without the widening (TestComparisonSizeOrderDrift). A
// comparison not made from launches (no serial factor) is left as it is.
func sequentialView(c *Comparison) *Comparison {
	if c.serial <= 0 {
		return c
	}
	cc := *c
	cc.est.SE *= math.Sqrt(math.Max(c.serial, 1) * serialMargin)
	return &cc
}

// serialMargin is the share by which the sequential rule's variance exceeds
// the serial factor's estimate. That estimate rests on a few rounds'
// consecutive products, and where it reads low the comparison is tested on
// too small an error: with the estimate alone the worst drift measured
// (TestComparisonSizeOrderDrift's first case) called 5.67% of A/A
// comparisons; 5% more variance 5.17%, 10% more 4.72% (and 4.21% over
// 16,000 comparisons of another seed). With no drift the margin costs 2%
// more rounds to a decision (6.66 against 6.52 at a true 3%) and no power.
const serialMargin = 1.1

// tieBounds are the log ratios of ±margin percent; an empty interval when
// there is no margin, so nothing is a tie.
func tieBounds(marginPct float64) (lo, hi float64) {
	if marginPct <= 0 {
		return 1, -1
	}
	return math.Log1p(-marginPct / 100), math.Log1p(marginPct / 100)
}

// rejects reports whether the test of e at the last of looks, spending
// level, rejects no difference: |t| at or beyond the look's boundary.
func (p SequentialPlan) rejects(e logDiff, looks []float64, level float64) bool {
	return tStat(e) >= p.critical(level, looks, e.DF)
}

// ties reports whether the (1 − 2α) repeated confidence interval of e at
// the last of looks lies inside [lo, hi]: the two one-sided tests, each at
// α, as a sequence of looks may make them.
func (p SequentialPlan) ties(e logDiff, looks []float64, alpha, lo, hi float64) bool {
	crit := p.critical(2*alpha, looks, e.DF)
	if math.IsInf(crit, 1) || lo > hi {
		return false
	}
	return e.D-crit*e.SE >= lo && e.D+crit*e.SE <= hi
}

// tStat is |D|/SE, +Inf for a difference with no error and 0 for none.
func tStat(e logDiff) float64 {
	if e.SE == 0 {
		if e.D == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(e.D) / e.SE
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
	// forbid is not a rejection). pAdj is the Holm-adjusted p of that test.
	rejected, passed bool
	alive            int
	pAdj             float64
	// closed: decided, or out of looks; decided: faster, slower or tie.
	closed, decided bool
	closedAt        int
}

// t is the hypothesis's t statistic at its latest look.
func (h *hypothesis) t() float64 { return tStat(h.at.est) }

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
	plan = plan.normalised()
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
			if cv.Comparisons[i].est.ok() {
				hs = append(hs, &hypothesis{capacity: i})
			}
		}
	}
	v.Comparisons = len(hs)
	v.CapacityComparisons = len(hs) - len(keys)
	alive := len(hs)
	adjusted := 0.0 // the largest Holm-adjusted p among the rejections so far
	tieLo, tieHi := tieBounds(v.EquivalenceMarginPct)
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
			c = sequentialView(c)
			look := c.est.ok() && c.Method == MethodLaunches && c.Rounds >= plan.MinRounds &&
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
		alive = holmLook(plan, v.Alpha, now, alive, &adjusted)
		for _, h := range now {
			tie := plan.ties(h.at.est, h.looks, v.Alpha, tieLo, tieHi) && h.callable(OutcomeTie)
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
// p, is at least that of every rejection before it (*adjusted, the largest
// so far, carried from look to look): Holm's adjusted p, below alpha exactly
// when the test rejected. Which hypotheses are rejected does not depend on
// the order. It returns how many are left unrejected.
func holmLook(plan SequentialPlan, alpha float64, now []*hypothesis, alive int, adjusted *float64) int {
	ps := map[*hypothesis]float64{}
	for _, h := range now {
		ps[h] = plan.repeatedP(h.at.est, h.looks, 0)
	}
	now = slices.Clone(now)
	slices.SortStableFunc(now, func(a, b *hypothesis) int { return cmp.Compare(ps[a], ps[b]) })
	for changed := true; changed; {
		changed = false
		for _, h := range now {
			if h.rejected {
				continue
			}
			level := alpha / float64(alive)
			h.alive = alive
			h.passed = plan.rejects(h.at.est, h.looks, level)
			h.pAdj = math.Min(1, float64(alive)*plan.repeatedP(h.at.est, h.looks, level))
			if h.passed && h.callable(h.direction()) {
				h.rejected, changed = true, true
				h.pAdj = math.Max(h.pAdj, *adjusted)
				*adjusted = h.pAdj
				alive--
			}
		}
	}
	return alive
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
	if len(looks) == 0 && c.est.ok() && c.Method == MethodLaunches {
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
	if crit := plan.critical(1-v.Confidence, looks, c.DF); !math.IsInf(crit, 1) {
		c.SpeedupLo, c.SpeedupHi = math.Exp(c.est.D-crit*c.est.SE), math.Exp(c.est.D+crit*c.est.SE)
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
	if crit := plan.critical(level, looks, c.DF); !math.IsInf(crit, 1) {
		c.OutcomeLo, c.OutcomeHi = math.Exp(c.est.D-crit*c.est.SE), math.Exp(c.est.D+crit*c.est.SE)
	} else {
		c.OutcomeLo, c.OutcomeHi = 0, math.Inf(1)
	}
	c.P = plan.repeatedP(c.est, looks, 0)
	c.PAdjusted = h.pAdj
	if len(h.looks) == 0 {
		c.PAdjusted = math.Min(1, c.P*float64(max(h.alive, 1)))
	}
	c.MDEPct = 0
	if crit := plan.critical(v.Alpha/float64(max(m, 1)), looks, c.DF); !math.IsInf(crit, 1) {
		power := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: c.DF}.Quantile(DefaultPower)
		c.MDEPct = pctOf((crit + power) * c.est.SE)
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
