package plan

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// The sequential rule as the planner forecasts it (docs/METHOD.md,
// "Sequential rounds"). Each assumption is the rule's own function, called
// rather than copied, so that a change to the rule moves the forecast with
// it:
//
//   - a look after every round from MinRounds to MaxRounds, whose
//     boundaries spend α by the O'Brien–Fleming-type function of R/MaxRounds
//     and are held to the t quantile at the look's df:
//     verdict.SequentialPlan.Critical (rule.Plan: Schedule, LookLevel);
//   - a tie when the (1 − 2α) repeated interval lies inside ±margin
//     (rule.Plan.Ties, rule.TieBounds);
//   - a win or loss when |t| reaches the boundary at α over the hypotheses
//     Holm has not rejected (holmLook in verdict/sequential.go; Goal.Holm);
//   - the standard error widened for the correlation of consecutive rounds
//     (sequentialView), by the rule's margin (verdict.SerialMargin) alone:
//     the serial factor the rule will estimate at the looks to come cannot
//     be read from the first ones (at three rounds its estimate swings from
//     1 to 7 on the campaigns of rule_forecast_test.go, where twelve rounds
//     read 1 to 3), and taken as it stood it called the margin out of reach
//     where the rule went on to decide;
//   - the df: the pooled launch variance's per round (rule.PooledVar) and
//     what a host's noise profile lends, with the variance its loan
//     carries, which weighs less as tonight's df grow (verdict's combine:
//     verdict.NoisePrior.LentDF, LentVar), taken by a tie's test and by a
//     win's or loss's only where it narrows that test's boundary
//     (verdict.LoanNarrows);
//   - a variant launched until all its comparisons with the baseline have
//     closed, the baseline until the last variant stops (verdict.Open).

// half is the chance at which a forecast is made: the median night.
const half = 0.5

// rulePlan is the goal's rounds as the rule's plan.
func (g Goal) rulePlan() verdict.SequentialPlan {
	return verdict.SequentialPlan{MinRounds: g.MinRounds, MaxRounds: g.MaxRounds}.Normalised()
}

// fixed reports whether the goal is a fixed design's (Goal.Fixed).
func (g Goal) fixed() bool { return g.Fixed || g.MaxRounds >= SearchRounds }

// looks are the information fractions of the looks a comparison has taken
// after rounds rounds (one after each round from the plan's minimum), as the
// rule records them; before the first, the look rounds would be, as the
// rule states an interval before any look (finishHypothesis). A fixed
// design is read once: one look at the whole information.
func (g Goal) looks(rounds int) []float64 {
	if g.fixed() {
		return []float64{1}
	}
	p := g.rulePlan()
	if rounds < p.MinRounds {
		return []float64{math.Min(1, float64(rounds)/float64(p.MaxRounds))}
	}
	var out []float64
	for r := p.MinRounds; r <= min(rounds, p.MaxRounds); r++ {
		out = append(out, float64(r)/float64(p.MaxRounds))
	}
	return out
}

// looked reports whether the rule has taken a look after rounds rounds.
func (g Goal) looked(rounds int) bool {
	return g.fixed() || rounds >= g.rulePlan().MinRounds
}

// df is the degrees of freedom of a comparison's variance after rounds
// rounds for a test at level: the rounds' own, and the profile's loan where
// the rule takes it (lends).
func (g Goal) df(level float64, rounds int) float64 {
	if g.lends(level, rounds) {
		return g.ownDF(rounds) + g.LentDF
	}
	return g.ownDF(rounds)
}

// ownDF is the df tonight's rounds give after rounds rounds.
func (g Goal) ownDF(rounds int) float64 { return g.DFPerRound * float64(rounds-1) }

// lends reports whether the rule takes the profile's loan for a test at
// level after rounds rounds: a fixed design at its one look whenever there
// is a loan, the sequential rule only where the loan narrows the test's
// boundary (verdict.LoanNarrows).
func (g Goal) lends(level float64, rounds int) bool {
	if g.LentDF <= 0 {
		return false
	}
	if g.fixed() {
		return true
	}
	return verdict.LoanNarrows(g.rulePlan(), g.looks(rounds), level, g.ownDF(rounds), g.LentDF)
}

// critical is the rule's critical |t| after rounds rounds for a test
// spending alpha.
func (g Goal) critical(alpha float64, rounds int) float64 {
	if rounds < 1 {
		return math.Inf(1)
	}
	return g.rulePlan().Critical(alpha, g.looks(rounds), g.df(alpha, rounds))
}

// tieCritical is the half-width, in standard errors, of the (1 − 2α)
// repeated interval a tie is read from after rounds rounds.
func (g Goal) tieCritical(rounds int) float64 { return g.critical(2*g.Alpha, rounds) }

// rejectCritical is the |t| a win or loss needs after rounds rounds: the
// boundary at Alpha over Holm's count.
func (g Goal) rejectCritical(rounds, holm int) float64 {
	return g.critical(g.Alpha/float64(max(holm, 1)), rounds)
}

// widening is the factor by which the rule multiplies a comparison's
// variance, as the planner forecasts it; a fixed design's is not widened.
func (g Goal) widening() float64 {
	if g.fixed() {
		return 1
	}
	return verdict.SerialMargin()
}

// closing is the chance that the rule closes comparison z, as a tie or a
// win or loss, at the look after r rounds, when the rounds so far (done of
// them, their variances summing to past) are followed by rounds of variance
// v each. The estimate then is the mean over r rounds; given what was
// measured it is normal about the estimate now, with the variance the
// further rounds add to it (its own uncertainty about the truth included),
// k·v/r² + (k/r)²·past/done², k the further rounds. A comparison not measured
// yet is taken at no difference, its estimate over its standard error a t
// at the look's df, as factor takes it, and only a tie closes it: a win or
// loss there would be an error the rule makes at most α of the time.
// Variances are the rule's, widened; b holds the look's boundaries.
func (in Inputs) closing(z Noise, past float64, r int, v float64, b boundaries) float64 {
	done := len(in.Past)
	if !b.look {
		return 0
	}
	k := float64(r - done)
	w := b.widening
	ruleVar, ownVar := b.lent(past, done)
	// A tie and a win or loss each take the loan only where it narrows
	// their boundary (boundaries.tieLent, rejectLent); without it a test
	// stands on tonight's variance alone.
	tieVar, rejectVar := ownVar, ownVar
	if b.tieLent {
		tieVar = ruleVar
	}
	if b.rejectLent {
		rejectVar = ruleVar
	}
	tieSE := math.Sqrt(tieVar*w*(past+k*v)) / float64(r)
	se := math.Sqrt(rejectVar*w*(past+k*v)) / float64(r)
	lo, hi := b.lo+b.tie*tieSE, b.hi-b.tie*tieSE // a tie: the estimate in [lo, hi]
	if !z.Measured || done == 0 {
		if lo > hi {
			return 0
		}
		t := distuv.StudentsT{Mu: 0, Sigma: tieSE, Nu: b.df}
		return t.CDF(hi) - t.CDF(lo)
	}
	spread := math.Sqrt(ownVar * w * (k*v + k*k*past/float64(done*done)) / float64(r*r))
	below := func(x float64) float64 { return normalBelow(x, z.Estimate, spread) }
	if lo > hi {
		return below(-b.reject*se) + 1 - below(b.reject*se)
	}
	return below(hi) - below(lo) + below(math.Min(-b.reject*se, lo)) + 1 - below(math.Max(b.reject*se, hi))
}

// boundaries are a look's: the margin's log bounds, the repeated
// interval's half-width a tie is read from and the |t| a win or loss needs,
// in standard errors.
type boundaries struct {
	lo, hi, tie, reject, df float64 // df: the tie's
	widening                float64 // Goal.widening
	look                    bool    // false before the first look: nothing closes
	// tieLent and rejectLent: the tie's test and the win's or loss's take
	// the profile's loan at this look (Goal.lends).
	tieLent, rejectLent bool
	// The df of tonight's rounds now and at the look, and the profile's
	// loan (Goal.LentDF, LentVar), for lent.
	ownNow, ownAt, lentDF, lentVar float64
}

// lent is how a host's profile moves a comparison's variance at the look,
// past the variance of the done rounds so far: the rule pools tonight's
// variance s² with the loan's, p, as (df·s² + L·p)/(df + L), df tonight's
// own and L the loan (verdict's combine). The rounds so far measured the
// pooled figure; s² is what it leaves once the loan is taken out. It
// returns the rule's variance at the look and tonight's own, each over the
// pooled figure now: 1 and 1 without a loan.
func (b boundaries) lent(past float64, done int) (rule, own float64) {
	if b.lentDF <= 0 || b.lentVar <= 0 || b.ownNow <= 0 || done < 1 || past <= 0 {
		return 1, 1
	}
	pooled := past / float64(done)
	s2 := math.Max((pooled*(b.ownNow+b.lentDF)-b.lentDF*b.lentVar)/b.ownNow, 0)
	at := (b.ownAt*s2 + b.lentDF*b.lentVar) / (b.ownAt + b.lentDF)
	return at / pooled, s2 / pooled
}

// boundariesAt are the rule's boundaries at the look after r rounds.
func (in Inputs) boundariesAt(g Goal, r int) boundaries {
	lo, hi := rule.TieBounds(g.MarginPct)
	tieLevel, rejectLevel := 2*g.Alpha, g.Alpha/float64(max(in.holm(g), 1))
	return boundaries{lo: lo, hi: hi, tie: g.tieCritical(r), reject: g.rejectCritical(r, in.holm(g)),
		df: g.df(tieLevel, r), widening: g.widening(), look: r >= 1 && g.df(tieLevel, r) > 0 && g.looked(r),
		tieLent: g.lends(tieLevel, r), rejectLent: g.lends(rejectLevel, r),
		ownNow: g.ownDF(len(in.Past)), ownAt: g.ownDF(r), lentDF: g.LentDF, lentVar: g.LentVar}
}

// holm is the count Holm divides Alpha among: Goal.Holm, or the family.
func (in Inputs) holm(g Goal) int {
	if g.Holm > 0 {
		return g.Holm
	}
	return in.family(g)
}

// normalBelow is P(X ≤ x) for X normal with mean m and standard deviation
// sd; a step at m when sd is 0.
func normalBelow(x, m, sd float64) float64 {
	if !(sd > 0) {
		if x >= m {
			return 1
		}
		return 0
	}
	return 0.5 * math.Erfc(-(x-m)/(sd*math.Sqrt2))
}

// variants are the variants of the open comparisons, ascending.
func (in Inputs) variants() []int {
	var out []int
	for _, z := range in.Noise {
		if !slices.Contains(out, z.Variant) {
			out = append(out, z.Variant)
		}
	}
	slices.Sort(out)
	return out
}

// closed is, for each variant of the open comparisons (variants), the
// chance that the rule has closed all of its comparisons at the look after
// r rounds, with requests n in every further round. A variant's levels
// share their launches, so its m comparisons are worth e independent ones
// (independent) and close together as far as they move together: the
// chance is the least of the m's, times each other's raised to
// (e − 1)/(m − 1), the least alone when the levels move as one, their
// product when they are independent.
func (in Inputs) closed(g Goal, past []float64, r int, n []int) []float64 {
	b := in.boundariesAt(g, r)
	vs := in.variants()
	ps := make([][]float64, len(vs))
	for i, z := range in.Noise {
		v := slices.Index(vs, z.Variant)
		ps[v] = append(ps[v], in.closing(z, past[i], r, z.Var(n[z.Level]), b))
	}
	out := make([]float64, len(vs))
	for v, p := range ps {
		slices.Sort(p)
		m := float64(len(p))
		e := math.Min(in.independent(g, len(p)), m)
		out[v] = p[0]
		for _, q := range p[1:] {
			out[v] *= math.Pow(q, (e-1)/(m-1))
		}
	}
	return out
}

// closes is the chance that the rule has closed every open comparison at
// the look after more further rounds with requests n: the night ends then.
// Variants are taken as independent of each other.
func (in Inputs) closes(g Goal, past []float64, more int, n []int) float64 {
	p := 1.0
	for _, q := range in.closed(g, past, len(in.Past)+more, n) {
		p *= q
	}
	return p
}

// Stops is the rule's forecast for the rounds to come: when each variant
// still open stops, and what the rounds cost in launches.
type Stops struct {
	// Rounds is the rounds in all each open variant is expected to run, by
	// Noise.Variant; Baseline the baseline's, until the last stops. A
	// variant still open at the goal's maximum stops there.
	Rounds   map[int]float64
	Baseline float64
	// Launches is the further launches expected: each open variant's and
	// the baseline's rounds beyond those run.
	Launches float64
	// Decides is the chance that the rule has closed every open comparison
	// by the goal's maximum: under one half, the margin is out of reach.
	Decides float64
}

// settled is the chance of a variant still open below which Stops looks
// no further: a share of a launch no forecast shows.
const settled = 1e-6

// Stops is the rule's forecast with requests n in every further round, up
// to the goal's maximum. A variant stops after the round whose look closes
// its last comparison, so it runs each further round before the maximum by
// whose start it is still open; the chance it is closed by a look is taken
// as the most the looks up to it give (a comparison closed at one look
// stays closed). The baseline runs while any variant does, the variants
// taken as independent.
func (in Inputs) Stops(n []int) Stops {
	g := in.Goal.withDefaults()
	past := in.pastVar()
	done := len(in.Past)
	vs := in.variants()
	rounds := make([]float64, len(vs))
	by := make([]float64, len(vs)) // each variant's chance of being closed so far
	s := Stops{Rounds: map[int]float64{}, Baseline: float64(done), Decides: 1}
	for v := range vs {
		rounds[v] = float64(done)
	}
	for r := done; r < g.MaxRounds; r++ {
		all := 1.0
		for v, p := range by {
			rounds[v] += 1 - p
			all *= p
		}
		s.Baseline += 1 - all
		if 1-all < settled {
			break
		}
		for v, p := range in.closed(g, past, r+1, n) {
			by[v] = math.Max(by[v], p)
		}
	}
	for v, id := range vs {
		s.Rounds[id] = rounds[v]
		s.Decides *= by[v]
		s.Launches += rounds[v] - float64(done)
	}
	if len(vs) > 0 {
		s.Launches += s.Baseline - float64(done)
	}
	return s
}
