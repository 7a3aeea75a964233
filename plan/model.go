package plan

import (
	"math"

	"github.com/bakeoff-dev/bakeoff/measure"

	"gonum.org/v1/gonum/stat/distuv"
)

// Defaults the planner falls back on; docs/METHOD.md says why each.
const (
	// DefaultMaxScale caps a level's requests at this many times its
	// minimum (the `auto` rule's count): past it a level's sweep runs for
	// tens of minutes, long enough for drift within the level to stop
	// averaging out as 1/n, which the model assumes.
	DefaultMaxScale = 10
	// DefaultDFPerRound is the effective degrees of freedom each round past
	// the first adds to the pooled launch variance: 8.4 over five at six
	// rounds under the synthetic noise (METHOD.md, the model).
	DefaultDFPerRound = 1.7
	// DefaultPower is the power at which the verdict states its minimum
	// detectable effect.
	DefaultPower = 0.8
	// DefaultAlpha is the verdict's significance level.
	DefaultAlpha = 0.05
	// SearchRounds bounds the rounds the planner considers when the goal
	// names no maximum: a plan of more is a plan that will not be run.
	SearchRounds = 200
)

// Level is one level of the sweep as the planner sees it.
type Level struct {
	// Key is the level.
	Key measure.Level
	// PerRequest is the sweep seconds one measured request at this level
	// adds to a launch, s: the level's wall time over its requests.
	PerRequest float64
	// Min and Max bound the requests the planner may choose: Min is the
	// `auto` rule's count (a steady state well past the ramp-up), Max
	// DefaultMaxScale times it unless set.
	Min, Max int
}

// Noise is one open comparison (a variant against the baseline at a
// level): the variance of one round's log ratio, split, and what the rule
// has seen of it.
type Noise struct {
	// Level is the comparison's index into Inputs.Levels.
	Level int
	// Variant says whose comparison it is: the rule launches a variant
	// until every one of its comparisons with the baseline has closed, so
	// comparisons with one Variant stop together (Stops).
	Variant int
	// Launch is σ²_L, the part of one round's variance that more requests
	// do not reduce (the two launches' luck, drift slower than a level),
	// log².
	Launch float64
	// Within is s²_W, the within-launch part of one round's variance
	// times the requests it was measured with: with n requests the part is
	// Within/n, log².
	Within float64
	// Estimate is the log ratio the rounds so far measured, when Measured;
	// a comparison not measured yet is forecast as if no difference were
	// there (closing, in stopping.go).
	Estimate float64
	Measured bool
}

// Var is one round's variance with n requests at the comparison's level.
func (z Noise) Var(n int) float64 { return z.Launch + z.Within/float64(max(n, 1)) }

// Goal is what the planner aims at and the rule it is judged by.
type Goal struct {
	// MarginPct is the detectable difference to reach, percent: the
	// campaign's equivalence_margin.
	MarginPct float64
	// Alpha is the verdict's significance level; Power the MDE's power.
	Alpha float64
	Power float64
	// Family is the comparisons the night waits on: the open comparisons
	// with the baseline, each of which keeps its variant launching (len of
	// Inputs.Noise when zero).
	Family int
	// Holm is the comparisons Holm's procedure divides Alpha among at the
	// next look: the rule's family (every pair of scenarios at every level,
	// and the capacities) less those it has rejected (holmLook in
	// verdict/sequential.go); Family when zero.
	Holm int
	// MinRounds and MaxRounds bound the rounds in all, those done
	// included; MaxRounds 0 is SearchRounds.
	MinRounds, MaxRounds int
	// Fixed says the campaign is a fixed design: its comparisons are read
	// once, after its last round, and not widened (fixed). A goal with no
	// maximum is one too.
	Fixed bool
	// DFPerRound is the effective df each round past the first adds
	// (DefaultDFPerRound when zero). LentDF is the df a host's noise
	// profile lends (verdict.NoisePrior.LentDF; a sequential look takes it
	// only where it narrows a test's boundary, Goal.lends), 0 without
	// one, and LentVar the variance of one round the loan carries, log²
	// (verdict.NoisePrior.LentVar).
	DFPerRound float64
	LentDF     float64
	LentVar    float64
}

func (g Goal) withDefaults() Goal {
	if g.Alpha <= 0 || g.Alpha >= 1 {
		g.Alpha = DefaultAlpha
	}
	if g.Power <= 0 || g.Power >= 1 {
		g.Power = DefaultPower
	}
	if g.MaxRounds <= 0 {
		g.MaxRounds = SearchRounds
	}
	g.MinRounds = max(g.MinRounds, 2) // one round measures no launch variance
	if g.DFPerRound <= 0 {
		g.DFPerRound = DefaultDFPerRound
	}
	return g
}

// factor is the multiple of the widened standard error that the
// campaign's decisions wait on after rounds rounds, for m independent
// comparisons: the MDE a plan states. A comparison near no difference
// closes as a tie when |δ̂| plus the (1 − 2α) repeated interval's half-width
// fits inside the margin (tieCritical, the rule's own boundary at that
// look); a comparison far enough from no difference for a win or loss is
// decided before that and no longer open, so the ties are what the night
// waits on. The night ends when the last of the m has closed: with each
// closed by then with probability q, all are with q^m, and the median
// night is the one where q = 0.5^(1/m), |δ̂| within t((1 + q)/2)·SE. Ties
// are not corrected for the family, so Alpha enters uncorrected and Power
// not at all. Whether the night ends by a round is closes' to say
// (stopping.go), which also knows the estimates and the wins and losses.
func (g Goal) factor(rounds int, m float64) float64 {
	df := g.df(2*g.Alpha, rounds)
	if df <= 0 {
		return math.Inf(1)
	}
	q := math.Pow(0.5, 1/math.Max(m, 1))
	return g.tieCritical(rounds) + distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile((1+q)/2)
}

// family is the comparisons the night waits on: Goal.Family, or the open
// comparisons.
func (in Inputs) family(g Goal) int {
	if g.Family > 0 {
		return g.Family
	}
	return max(len(in.Noise), 1)
}

// independent is as many independent comparisons as the family's are
// worth: the levels of a round share its launches, so comparisons move
// together as far as the levels do, and the pooled variance's df count the
// independent levels among len(Levels) (rule.PooledVar: DFPerRound of
// them, at least one).
func (in Inputs) independent(g Goal, m int) float64 {
	share := math.Min(g.DFPerRound/float64(max(len(in.Levels), 1)), 1)
	return math.Max(float64(m)*share, 1)
}

// Inputs is everything the planner knows.
type Inputs struct {
	Levels []Level
	// Launch is the fixed seconds of one launch: everything but the
	// measured requests (stop, GPU memory waits, loading until ready,
	// smoke, warm-up, collect).
	Launch float64
	// Scenarios is the launches each further round makes (the scenarios
	// still open, the baseline among them).
	Scenarios int
	// Noise holds the open comparisons; a plan serves the worst of them.
	Noise []Noise
	// Past is the requests each level took in each round already run, in
	// Levels order, one slice per round.
	Past [][]int
	Goal Goal
}

// RoundSeconds is the expected wall time of one round with requests n per
// level (Levels order), s.
func (in Inputs) RoundSeconds(n []int) float64 {
	t := in.Launch
	for j, l := range in.Levels {
		t += float64(n[j]) * l.PerRequest
	}
	return float64(max(in.Scenarios, 1)) * t
}

// bounds are each level's Min and Max, a Max of zero made DefaultMaxScale
// times Min.
func (in Inputs) bounds() (lo, hi []int) {
	lo, hi = make([]int, len(in.Levels)), make([]int, len(in.Levels))
	for j, l := range in.Levels {
		lo[j] = max(l.Min, 1)
		hi[j] = l.Max
		if hi[j] <= 0 {
			hi[j] = DefaultMaxScale * lo[j]
		}
		hi[j] = max(hi[j], lo[j])
	}
	return lo, hi
}

// pastVar is each comparison's summed variance of the rounds already run.
func (in Inputs) pastVar() []float64 {
	a := make([]float64, len(in.Noise))
	for i, z := range in.Noise {
		for _, round := range in.Past {
			if z.Level < len(round) {
				a[i] += z.Var(round[z.Level])
			}
		}
	}
	return a
}

// mde is the worst open comparison's detectable difference, log, after
// more further rounds with requests n: the verdict's estimate is the plain
// mean over rounds, so its variance is the rounds' variances summed over
// the rounds squared, which the sequential rule widens.
func (in Inputs) mde(g Goal, past []float64, more int, n []int) float64 {
	r := len(in.Past) + more
	if r < 1 {
		return math.Inf(1)
	}
	worst := 0.0
	k := g.factor(r, in.independent(g, in.family(g)))
	for i, z := range in.Noise {
		v := g.widening() * (past[i] + float64(more)*z.Var(n[z.Level])) / float64(r*r)
		worst = math.Max(worst, k*math.Sqrt(v))
	}
	return worst
}

// cheapest is the fewest requests per level with which more further rounds
// bring every open comparison's detectable difference to target (log);
// ok is false when no count within the bounds does.
func (in Inputs) cheapest(g Goal, past []float64, more int, target float64) (n []int, ok bool) {
	lo, hi := in.bounds()
	n = clone(lo)
	r := len(in.Past) + more
	k := g.factor(r, in.independent(g, in.family(g)))
	for i, z := range in.Noise {
		// The per-round variance the further rounds may have.
		room := (math.Pow(target*float64(r)/k, 2)/g.widening() - past[i]) / float64(more)
		switch {
		case room <= z.Launch:
			return nil, false
		case z.Within <= 0:
			continue
		}
		need := int(math.Ceil(z.Within/(room-z.Launch) - 1e-9))
		if need > hi[z.Level] {
			return nil, false
		}
		n[z.Level] = max(n[z.Level], need)
	}
	return n, true
}

func clone(x []int) []int { return append([]int(nil), x...) }

// pctOf turns a log difference into percent, as the verdict prints it.
func pctOf(d float64) float64 { return 100 * math.Expm1(d) }

// logOf turns a percent difference into a log one.
func logOf(pct float64) float64 { return math.Log1p(pct / 100) }
