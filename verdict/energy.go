package verdict

import (
	"fmt"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// CheckEnergy names the note on GPU power readings.
const CheckEnergy = "energy"

// LevelEnergy is one scenario's GPU energy at one level, when power was
// read (docs/METHOD.md, Energy).
type LevelEnergy struct {
	// PowerW is the mean GPU power over the steady-state windows, watts,
	// summed over the scenario's GPUs: the geometric mean of the launches
	// with its interval across launches.
	PowerW Estimate `json:"power_w"`
	// JoulesPerKTok is the GPU energy per 1000 output tokens over the same
	// windows, joules, with its interval across launches.
	JoulesPerKTok Estimate `json:"joules_per_1k_tok"`
	// Launches are the per-launch figures the estimates come from.
	Launches []LaunchEnergy `json:"launches"`
}

// LaunchEnergy is one launch's energy at one level, its repeats pooled.
type LaunchEnergy struct {
	Round         int     `json:"round"`
	PowerW        float64 `json:"power_w"`
	JoulesPerKTok float64 `json:"joules_per_1k_tok"`
}

// launchLevelEnergy measures one launch's energy per level from its power
// readings and records: over each repeat's steady-state window (the one
// its throughput is measured over), the energy and the tokens produced
// inside it, pooled over repeats. A level whose window the readings do not
// cover is left out, with the reason.
func launchLevelEnergy(l records.Launch, maxSlices int) (map[measure.Level]LaunchEnergy, []string) {
	out := map[measure.Level]LaunchEnergy{}
	if l.Power == nil || l.Power.Unavailable != "" {
		return out, nil
	}
	var problems []string
	groups := groupLevels(l.Records)
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
			out[c] = LaunchEnergy{Round: l.Round, PowerW: joules / sec, JoulesPerKTok: joules / tokens * 1000}
		}
	}
	return out, problems
}

// scenarioEnergy sets every level's Energy from the launches' power
// readings, with intervals across launches from the launch-to-launch
// machinery the throughput uses (rule.PooledVar over the scenario's
// levels × rounds, on log values). It returns the reasons levels have no
// energy.
func scenarioEnergy(s *Scenario, launches []records.Launch, maxSlices int, conf float64) []string {
	var problems []string
	per := map[measure.Level][]LaunchEnergy{}
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
	table := func(f func(LaunchEnergy) float64) [][]float64 {
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
	watts := launchEstimates(table(func(e LaunchEnergy) float64 { return e.PowerW }), conf)
	joules := launchEstimates(table(func(e LaunchEnergy) float64 { return e.JoulesPerKTok }), conf)
	for i := range s.Levels {
		es := per[s.Levels[i].Level]
		// A saturated level's figures grow with its length: no energy
		// per token is honest there either.
		if len(es) == 0 || s.Levels[i].Saturated {
			continue
		}
		slices.SortFunc(es, func(a, b LaunchEnergy) int { return a.Round - b.Round })
		s.Levels[i].Energy = &LevelEnergy{PowerW: watts[i], JoulesPerKTok: joules[i], Launches: es}
	}
	return problems
}

// launchEstimates is, per row of a levels × rounds table of log values (NaN
// where missing), the geometric mean with its interval from the pooled
// launch-to-launch variance; with one launch the interval is the point.
func launchEstimates(table [][]float64, conf float64) []Estimate {
	lv := rule.PooledVar(table)
	out := make([]Estimate, len(table))
	for i, row := range table {
		mean, n := rule.RowMean(row)
		if n == 0 {
			continue
		}
		e := Estimate{Center: math.Exp(mean), Confidence: conf, N: n}
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

// checkEnergy says once why a run has no energy figures where it has none:
// power not reported ([N/A]), no readings, or windows the readings did not
// cover.
func checkEnergy(v *Verdict, in records.Input) []Note {
	var unavailable []string
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(in.Launches)) {
		for _, l := range in.Launches[name] {
			if l.Power != nil && l.Power.Unavailable != "" && !seen[l.Power.Unavailable] {
				seen[l.Power.Unavailable] = true
				unavailable = append(unavailable, l.Power.Unavailable)
			}
		}
	}
	var notes []Note
	if len(unavailable) > 0 {
		notes = append(notes, Note{Severity: SeverityInfo, Check: CheckEnergy,
			Text: "no energy figures where the GPUs report no power: " + strings.Join(unavailable, "; ")})
	}
	// One note per scenario, however many levels lack a figure.
	var order []string
	byScenario := map[string][]string{}
	for _, p := range v.energyProblems {
		if byScenario[p.scenario] == nil {
			order = append(order, p.scenario)
		}
		byScenario[p.scenario] = append(byScenario[p.scenario], p.text)
	}
	for _, name := range order {
		notes = append(notes, Note{Severity: SeverityWarn, Check: CheckEnergy, Scenario: name,
			Text: name + ": no energy figure at " + strings.Join(byScenario[name], "; ")})
	}
	return notes
}

// energyProblem is why a scenario's level has no energy figure.
type energyProblem struct{ scenario, text string }

// HasEnergy reports whether any level of any scenario has an energy figure.
func (v *Verdict) HasEnergy() bool {
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.Energy != nil {
				return true
			}
		}
	}
	return false
}
