package judge

import (
	"fmt"
	"github.com/bakeoff-dev/bakeoff/verdict/policy"
	"math"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// Selection replays a selection campaign's race (question: select) from
// its verdict: its scenarios as the configurations in campaign order, its
// levels, and round by round each launch's log throughput at each level.
// The race decides from the same launches the verdict measured, so a look
// before a round and the report afterwards read the same race.
//
// A configuration whose launch failed in the first stage is left out of
// the race (leftOut names it), and one whose launch failed later is
// withdrawn from it (an Elimination marked Withdrawn).
func Selection(v *verdict.Verdict, info *results.SelectInfo) (res *selection.Result, leftOut []string, err error) {
	configs := make([]string, 0, len(v.Scenarios))
	for _, s := range v.Scenarios {
		configs = append(configs, s.Name)
	}
	levels := make([]string, 0, len(v.Levels)+1)
	for _, c := range v.Levels {
		levels = append(levels, measure.LevelName(c))
	}
	loads := len(levels)
	capacity := raceCapacity(v) // nil when the race has no capacity column
	if capacity != nil {
		levels = append(levels, policy.CapacityLevel)
	}
	rounds := make([]selection.Round, v.Rounds)
	for r := range rounds {
		rounds[r] = make(selection.Round, len(configs))
	}
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		for _, l := range s.Levels {
			c := levelIndex(v.Levels, l.Level)
			if c < 0 {
				continue
			}
			for _, ll := range l.Launches {
				if ll.Round < 1 || ll.Round > v.Rounds || !(ll.Throughput > 0) {
					continue
				}
				row := rounds[ll.Round-1]
				if row[i] == nil {
					row[i] = nanLevels(len(levels))
				}
				row[i][c] = math.Log(ll.Throughput)
			}
		}
		for r, x := range capacity[s.Name] {
			if row := rounds[r-1]; row[i] != nil {
				row[i][loads] = math.Log(x)
			}
		}
	}
	// The race ends by the campaign's last round but one at the latest,
	// which keeps the last for the confirmation round (a campaign of two
	// rounds has none to spare); a first stage longer than the race would
	// never end, so it is cut to the race's rounds (its variance then has
	// fewer df, and h² grows).
	planned := selection.RaceRounds(LastRound(v))
	o := selection.Options{Delta: info.DeltaPct / 100, PCS: info.PCS, MaxRounds: planned, LoadLevels: loads}
	o.FirstStage = min(selection.DefaultFirstStage(len(configs)), o.MaxRounds)
	if info.FirstStage > 0 {
		o.FirstStage = min(info.FirstStage, o.MaxRounds)
	}
	return selection.Replay(configs, levels, rounds, o)
}

// LastRound is the campaign's last round as a race counts it: the plan's
// maximum under a sequential plan, else the rounds planned, and at least
// the rounds run. Not v.RoundsPlanned under a plan: the comparisons with the
// baseline shrink that to the round after which the last variant stopped
// once they are all decided, which a race does not wait on, and a race
// that read it ended one round early and lost its confirmation round.
func LastRound(v *verdict.Verdict) int {
	last := max(v.RoundsPlanned, v.Rounds)
	if v.Sequential != nil {
		last = max(last, v.Sequential.MaxRounds)
	}
	return last
}

// raceCapacity is each scenario's SLO capacity by round, for the race's
// capacity column: the capacity is raced like a level (the configuration
// with the most users, or requests a second, under the objective), a
// launch whose capacity is only a bound counted at its edge, as the
// capacity comparison counts it. Nil without an objective, and when some
// launch the race reads has no capacity (the objective's metrics missing
// from it), since the race cannot rank a configuration by a figure some of
// its launches lack: the note then says so (capacityNote).
func raceCapacity(v *verdict.Verdict) map[string]map[int]float64 {
	if v.Capacity == nil {
		return nil
	}
	out := map[string]map[int]float64{}
	for _, sc := range v.Capacity.Scenarios {
		out[sc.Scenario] = map[int]float64{}
		for _, l := range sc.Launches {
			if l.Capacity > 0 && l.Round >= 1 && l.Round <= v.Rounds {
				out[sc.Scenario][l.Round] = l.Capacity
			}
		}
	}
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			for _, ll := range l.Launches {
				if _, ok := out[s.Name][ll.Round]; ll.Throughput > 0 && !ok && ll.Round >= 1 && ll.Round <= v.Rounds {
					return nil
				}
			}
		}
	}
	return out
}

// capacityNote says why a race under an objective left the capacity out;
// empty when it raced it or has no objective.
func capacityNote(v *verdict.Verdict) string {
	if v.Capacity == nil || raceCapacity(v) != nil {
		return ""
	}
	return "the race for the best configuration ranks the levels only, not the SLO capacity: some launches have no capacity under the objective (a metric it names missing from their levels)"
}

// SelectionNote is the warning on configurations left out of a race
// because a launch of theirs failed in its first stage; empty when none.
func SelectionNote(leftOut []string) string {
	if len(leftOut) == 0 {
		return ""
	}
	return fmt.Sprintf("left out of the race for the best configuration, a launch of each having failed in its first stage: %s; rerun it (--only NAME --round K) to race it",
		strings.Join(leftOut, ", "))
}

func levelIndex(levels []measure.Level, c measure.Level) int {
	for i, l := range levels {
		if l == c {
			return i
		}
	}
	return -1
}

func nanLevels(n int) []float64 {
	row := make([]float64, n)
	for i := range row {
		row[i] = math.NaN()
	}
	return row
}

// withSelection sets v.Selection for a selection campaign, or a note
// saying why the race could not be replayed.
func withSelection(v *verdict.Verdict, m results.Manifest) {
	if m.Select == nil {
		return
	}
	res, leftOut, err := Selection(v, m.Select)
	for _, note := range []string{SelectionNote(leftOut), capacityNote(v)} {
		if note != "" {
			v.Notes = append(v.Notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckSelection, Text: note})
		}
	}
	if err != nil {
		v.Notes = append(v.Notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckSelection,
			Text: fmt.Sprintf("the race for the best configuration could not be read from the launches: %v", err)})
		return
	}
	v.Selection = res
	v.PolicyCheck = policy.Check(res)
	if res.Done && v.PolicyCheck == nil {
		v.Policy = policy.Write(policy.Bands(res), policy.Configs(m.Resolved))
	}
}
