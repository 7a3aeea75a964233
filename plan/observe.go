package plan

import (
	"math"

	"github.com/bakeoff-dev/bakeoff/measure"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Observed is the planner's inputs from what the rounds so far measured:
//
//   - each level's cost per request: the mean over the scenarios of the
//     level's wall time (first send to last end, summed over its launches)
//     over its requests;
//   - a launch's fixed cost: the mean over the completed launches of all
//     their phases' seconds (stop, GPU memory waits, ready, smoke, sweep,
//     collect), less the requests' share of the sweep;
//   - each open comparison of a variant with the baseline (open: nil is
//     Inconclusive), with one round's variance split: the level's
//     within-launch part (the comparison's round variance times its
//     within-launch share) times the requests it was measured with (their
//     harmonic mean over past, since each round's part is s²_W/n), and a
//     launch part shared by the variant's levels, what its round variance
//     holds beyond the levels' mean within-launch part (the verdict pools
//     the round variance over levels);
//   - each one's estimate, from which the rule's forecast starts (Stops);
//   - the effective df per round from those comparisons, less what a host's
//     noise profile lends (Goal.LentDF), and the count Holm
//     divides alpha among at the next look (Goal.Holm).
//
// past is the requests each level took in each round so far (v.Levels
// order); levels gives each level's bounds (Min, Max; Key and PerRequest
// are filled in). The goal's margin, alpha, family and whether the design
// is fixed come from v; its rounds bounds from goal. Scenarios is the verdict's measured scenarios:
// the caller sets it to those still open.
func Observed(v *verdict.Verdict, launches []results.ScenarioResult, past [][]int, bounds map[measure.Level]Level, open Open, goal Goal) Inputs {
	if open == nil {
		open = Inconclusive
	}
	in := Inputs{Past: past}
	index := map[measure.Level]int{}
	var sweepPerLaunch float64
	for j, key := range v.Levels {
		l := bounds[key]
		l.Key = key
		var sum float64
		k := 0
		for _, s := range v.Scenarios {
			lv := s.Level(key)
			if lv == nil || lv.Requests == 0 || lv.WallThroughput <= 0 || len(lv.Launches) == 0 {
				continue
			}
			wall := float64(lv.Tokens) / lv.WallThroughput
			sum += wall / float64(lv.Requests)
			sweepPerLaunch += wall / float64(len(lv.Launches)) / float64(len(v.Scenarios))
			k++
		}
		if k > 0 {
			l.PerRequest = sum / float64(k)
		}
		index[key] = j
		in.Levels = append(in.Levels, l)
	}
	var total float64
	n := 0
	for _, l := range launches {
		if l.Status != results.StatusOK {
			continue
		}
		for _, s := range l.PhaseSeconds {
			total += s
		}
		n++
	}
	if n > 0 {
		in.Launch = math.Max(total/float64(n)-sweepPerLaunch, 0)
	}
	for _, s := range v.Scenarios {
		if !s.Failed() {
			in.Scenarios++
		}
	}
	// The verdict pools one round's variance over the levels, while the
	// within-launch part is each level's own: the launch part is what the
	// pool holds beyond the levels' mean within-launch part, per variant.
	type cell struct {
		j         int
		v, within float64
		open      bool
		cmp       verdict.Comparison
	}
	byVariant := map[string][]cell{}
	var order []string
	lent := lentDF(v)
	var dfSum float64
	dfN, rejected := 0, 0
	for _, row := range v.Rows {
		for _, c := range row.Cells {
			cmp := c.Comparison
			if c.Compared && cmp.Decided && (cmp.Outcome == verdict.OutcomeFaster || cmp.Outcome == verdict.OutcomeSlower) {
				rejected++
			}
			if !c.Compared || cmp.RoundSDPct <= 0 {
				continue
			}
			sd := math.Log1p(cmp.RoundSDPct / 100)
			w := math.Min(math.Max(cmp.WithinShare, 0), 1)
			if _, ok := byVariant[c.Scenario]; !ok {
				order = append(order, c.Scenario)
			}
			byVariant[c.Scenario] = append(byVariant[c.Scenario], cell{index[row.Level], sd * sd, w * sd * sd,
				open(c.Scenario, row.Level, cmp), cmp})
			if cmp.Rounds > 1 && cmp.DF > 0 {
				dfSum += math.Max(cmp.DF-lent, 0) / float64(cmp.Rounds-1)
				dfN++
			}
		}
	}
	for variant, name := range order {
		cells := byVariant[name]
		var v, w float64
		for _, c := range cells {
			v += c.v
			w += c.within
		}
		launch := math.Max(v-w, 0) / float64(len(cells))
		for _, c := range cells {
			if c.open {
				in.Noise = append(in.Noise, Noise{Level: c.j, Variant: variant, Launch: launch,
					Within: c.within * harmonic(past, c.j), Estimate: math.Log(c.cmp.Speedup),
					Measured: c.cmp.Speedup > 0})
			}
		}
	}
	goal.MarginPct, goal.Alpha, goal.Fixed = v.EquivalenceMarginPct, v.Alpha, goal.Fixed || v.Sequential == nil
	// The night waits on the open comparisons with the baseline (the rule
	// launches a variant until they close), while a win or loss is tested
	// at alpha over every hypothesis of the family Holm has not rejected
	// (holmLook), pairs of variants included; the rejections the rows do
	// not show (between variants) are not counted, which leans the boundary
	// a little high.
	goal.Family, goal.Holm = len(in.Noise), max(v.Comparisons-rejected, 1)
	if lent > 0 {
		goal.LentDF, goal.LentVar = lent, v.Prior.LentVar()
	}
	if dfN > 0 && goal.DFPerRound <= 0 {
		goal.DFPerRound = dfSum / float64(dfN)
	}
	in.Goal = goal
	return in
}

// lentDF is the df the host's noise profile lends each look of the
// verdict's comparisons: its loan (verdict.NoisePrior.LentDF) times the
// share of pairs whose noise agreed with it on the rounds so far, since a
// pair that disagreed is judged on its own rounds alone.
func lentDF(v *verdict.Verdict) float64 {
	uses := v.PriorUses()
	if len(uses) == 0 {
		return 0
	}
	agreed := 0
	for _, u := range uses {
		if u.Agreed {
			agreed++
		}
	}
	return v.Prior.LentDF() * float64(agreed) / float64(len(uses))
}

// Open says whether a variant's comparison at a level is still open: the
// sequential rule's decision, which the planner serves.
type Open func(variant string, level measure.Level, c verdict.Comparison) bool

// Inconclusive is the Open of a fixed design: the comparisons the verdict
// left inconclusive.
func Inconclusive(_ string, _ measure.Level, c verdict.Comparison) bool {
	return c.Outcome == verdict.OutcomeInconclusive
}

// All treats every comparison as open: a plan for the precision of all.
func All(string, measure.Level, verdict.Comparison) bool { return true }

// harmonic is the harmonic mean of level j's requests over the rounds, 1
// when past says nothing.
func harmonic(past [][]int, j int) float64 {
	var inv float64
	n := 0
	for _, r := range past {
		if j < len(r) && r[j] > 0 {
			inv += 1 / float64(r[j])
			n++
		}
	}
	if n == 0 {
		return 1
	}
	return float64(n) / inv
}
