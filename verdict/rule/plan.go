package rule

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Plan is a campaign's sequential design: at least MinRounds
// rounds, at most MaxRounds, a look after each round from MinRounds on.
type Plan struct {
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
func (p Plan) Normalised() Plan {
	if p.MinRounds < 2 {
		p.MinRounds = DefaultMinRounds
	}
	p.MaxRounds = max(p.MaxRounds, p.MinRounds)
	return p
}

// schedule is the plan's information fractions, R/MaxRounds for R from
// MinRounds to MaxRounds: the looks a comparison with a launch in every
// round takes.
func (p Plan) Schedule() []float64 {
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
func (p Plan) LookLevel(alpha float64, looks []float64) float64 {
	if len(looks) == 0 {
		return 0
	}
	sched := p.Schedule()
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
func (p Plan) Critical(alpha float64, looks []float64, df float64) float64 {
	lvl := p.LookLevel(alpha, looks)
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
func (p Plan) RepeatedP(e Diff, looks []float64, tested float64) float64 {
	if !e.OK() || len(looks) == 0 {
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
		l := p.LookLevel(a, looks)
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

// TieBounds are the log ratios of ±margin percent; an empty interval when
// there is no margin, so nothing is a tie.
func TieBounds(marginPct float64) (lo, hi float64) {
	if marginPct <= 0 {
		return 1, -1
	}
	return math.Log1p(-marginPct / 100), math.Log1p(marginPct / 100)
}

// rejects reports whether the test of e at the last of looks, spending
// level, rejects no difference: |t| at or beyond the look's boundary.
func (p Plan) Rejects(e Diff, looks []float64, level float64) bool {
	return TStat(e) >= p.Critical(level, looks, e.DF)
}

// ties reports whether the (1 − 2α) repeated confidence interval of e at
// the last of looks lies inside [lo, hi]: the two one-sided tests, each at
// α, as a sequence of looks may make them.
func (p Plan) Ties(e Diff, looks []float64, alpha, lo, hi float64) bool {
	crit := p.Critical(2*alpha, looks, e.DF)
	if math.IsInf(crit, 1) || lo > hi {
		return false
	}
	return e.D-crit*e.SE >= lo && e.D+crit*e.SE <= hi
}

// TStat is |D|/SE, +Inf for a difference with no error and 0 for none.
func TStat(e Diff) float64 {
	if e.SE == 0 {
		if e.D == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(e.D) / e.SE
}
