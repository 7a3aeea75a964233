package plan

import (
	"math"

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
//   - each comparison of a variant with the baseline that the verdict left
//     inconclusive, with one round's variance (the comparison's round sd)
//     split by its within-launch share: the within part times the
//     requests it was measured with (their harmonic mean over past, since
//     each round's part is s²_W/n), the rest the launch part;
//   - the effective df per round from those comparisons.
//
// past is the requests each level took in each round so far (v.Levels
// order); levels gives each level's bounds (Min, Max; Key and PerRequest
// are filled in). The goal's margin, alpha and family come from v; its
// rounds bounds from goal. Scenarios is the verdict's measured scenarios:
// the caller sets it to those still open.
func Observed(v *verdict.Verdict, launches []results.ScenarioResult, past [][]int, bounds map[int]Level, goal Goal) Inputs {
	in := Inputs{Past: past}
	index := map[int]int{}
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
	var dfSum float64
	dfN := 0
	for _, row := range v.Rows {
		j := index[row.Level]
		for _, cell := range row.Cells {
			c := cell.Comparison
			if !cell.Compared || c.Outcome != verdict.OutcomeInconclusive || c.RoundSDPct <= 0 {
				continue
			}
			sd := math.Log1p(c.RoundSDPct / 100)
			w := math.Min(math.Max(c.WithinShare, 0), 1)
			in.Noise = append(in.Noise, Noise{Level: j, Launch: (1 - w) * sd * sd,
				Within: w * sd * sd * harmonic(past, j)})
			if c.Rounds > 1 && c.DF > 0 {
				dfSum += c.DF / float64(c.Rounds-1)
				dfN++
			}
		}
	}
	goal.MarginPct, goal.Alpha, goal.Family = v.EquivalenceMarginPct, v.Alpha, v.Comparisons
	if dfN > 0 && goal.DFPerRound <= 0 {
		goal.DFPerRound = dfSum / float64(dfN)
	}
	in.Goal = goal
	return in
}

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
