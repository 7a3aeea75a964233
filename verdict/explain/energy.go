package explain

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// launchLevelEnergy measures one launch's energy per level from its power
// readings and records: over each repeat's steady-state window (the one
// its throughput is measured over), the energy and the tokens produced
// inside it, pooled over repeats. A level whose window the readings do not
// cover is left out, with the reason.
func launchLevelEnergy(l records.Launch, maxSlices int) (map[measure.Level]verdict.LaunchEnergy, []string) {
	out := map[measure.Level]verdict.LaunchEnergy{}
	if l.Power == nil || l.Power.Unavailable != "" {
		return out, nil
	}
	var problems []string
	groups := records.ByLevel(l.Records)
	for _, c := range slices.SortedFunc(maps.Keys(groups), measure.Level.Compare) {
		var joules, tokens, sec float64
		ok := true
		for _, rep := range slices.Sorted(maps.Keys(groups[c])) {
			tp := measure.LevelThroughput(groups[c][rep], c, maxSlices)
			e, err := l.Power.Energy(tp.Window)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s round %d: %v", c, l.Round, err))
				ok = false
				break
			}
			joules += e.Joules
			tokens += tp.Tokens
			sec += tp.Window.Seconds()
		}
		if ok && tokens > 0 && sec > 0 {
			out[c] = verdict.LaunchEnergy{Round: l.Round, PowerW: joules / sec, JoulesPerKTok: joules / tokens * 1000}
		}
	}
	return out, problems
}

// scenarioEnergy sets every level's Energy from the launches' power
// readings, with intervals across launches from the launch-to-launch
// machinery the throughput uses (rule.PooledVar over the scenario's
// levels × rounds, on log values). It returns the reasons levels have no
// energy.
func scenarioEnergy(s *verdict.Scenario, launches []records.Launch, maxSlices int, conf float64) []string {
	var problems []string
	per := map[measure.Level][]verdict.LaunchEnergy{}
	for _, l := range launches {
		m, p := launchLevelEnergy(l, maxSlices)
		problems = append(problems, p...)
		for c, e := range m {
			per[c] = append(per[c], e)
		}
	}
	if len(per) == 0 {
		return problems
	}
	rounds := map[int]int{}
	for _, es := range per {
		for _, e := range es {
			rounds[e.Round] = 0
		}
	}
	for i, r := range slices.Sorted(maps.Keys(rounds)) {
		rounds[r] = i
	}
	table := func(f func(verdict.LaunchEnergy) float64) [][]float64 {
		t := make([][]float64, len(s.Levels))
		for i := range s.Levels {
			row := make([]float64, len(rounds))
			for j := range row {
				row[j] = math.NaN()
			}
			for _, e := range per[s.Levels[i].Level] {
				if v := f(e); v > 0 {
					row[rounds[e.Round]] = math.Log(v)
				}
			}
			t[i] = row
		}
		return t
	}
	watts := launchEstimates(table(func(e verdict.LaunchEnergy) float64 { return e.PowerW }), conf)
	joules := launchEstimates(table(func(e verdict.LaunchEnergy) float64 { return e.JoulesPerKTok }), conf)
	for i := range s.Levels {
		es := per[s.Levels[i].Level]
		// A saturated level's figures grow with its length: no energy
		// per token is honest there either.
		if len(es) == 0 || s.Levels[i].Saturated {
			continue
		}
		slices.SortFunc(es, func(a, b verdict.LaunchEnergy) int { return a.Round - b.Round })
		s.Levels[i].Energy = &verdict.LevelEnergy{PowerW: watts[i], JoulesPerKTok: joules[i], Launches: es}
	}
	return problems
}

// launchEstimates is, per row of a levels × rounds table of log values (NaN
// where missing), the geometric mean with its interval from the pooled
// launch-to-launch variance; with one launch the interval is the point.
func launchEstimates(table [][]float64, conf float64) []verdict.Estimate {
	lv := rule.PooledVar(table)
	out := make([]verdict.Estimate, len(table))
	for i, row := range table {
		mean, n := rule.RowMean(row)
		if n == 0 {
			continue
		}
		e := verdict.Estimate{Center: math.Exp(mean), Confidence: conf, N: n}
		e.Lo, e.Hi = e.Center, e.Center
		if lv.DF > 0 {
			d := rule.Diff{D: mean, SE: math.Sqrt(lv.Var / float64(n)), DF: lv.DF}
			lo, hi := d.Interval(conf)
			e.Lo, e.Hi = math.Exp(lo), math.Exp(hi)
		}
		out[i] = e
	}
	return out
}
