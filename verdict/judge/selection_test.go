package judge

import (
	"math"
	"slices"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/policy"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// raceVerdict is a verdict of a race's launches: per configuration its
// throughput at C=1 and C=8 by round, a zero for a launch that failed.
func raceVerdict(planned int, figures map[string][][2]float64) *verdict.Verdict {
	levels := []measure.Level{measure.ConcurrencyLevel(1), measure.ConcurrencyLevel(8)}
	v := &verdict.Verdict{Levels: levels, RoundsPlanned: planned}
	for _, name := range []string{"a", "b", "c", "d"} {
		s := verdict.Scenario{Name: name}
		for c, lv := range levels {
			l := verdict.Level{Level: lv}
			for r, f := range figures[name] {
				if f[c] > 0 {
					l.Launches = append(l.Launches, verdict.LaunchLevel{Round: r + 1, Throughput: f[c]})
				}
				v.Rounds = max(v.Rounds, r+1)
			}
			s.Levels = append(s.Levels, l)
		}
		v.Scenarios = append(v.Scenarios, s)
	}
	return v
}

// wobbly is n rounds of figures near (x, y), each a little off, phase
// setting how.
func wobbly(n int, x, y, phase float64) [][2]float64 {
	var out [][2]float64
	for r := range n {
		e := 1 + 0.02*math.Sin(float64(3*r+1)+phase)
		out = append(out, [2]float64{x * e, y / e})
	}
	return out
}

// TestSelectionReplaysFailedLaunches: a configuration whose launch failed
// in the first stage is left out of the race and named; one whose launch
// failed after it is withdrawn before that round; the race still ends on
// the others, b best at C=1 and a at C=8.
func TestSelectionReplaysFailedLaunches(t *testing.T) {
	figs := map[string][][2]float64{
		"a": wobbly(6, 100, 900, 0), "b": wobbly(6, 130, 600, 1), "c": wobbly(6, 102, 880, 2), "d": wobbly(6, 60, 300, 3),
	}
	figs["d"][1] = [2]float64{} // d's launch of round 2 failed
	figs["c"][2] = [2]float64{} // c's launch of round 3 failed
	res, leftOut, err := Selection(raceVerdict(6, figs), &results.SelectInfo{DeltaPct: 2, PCS: 0.95, FirstStage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(leftOut, []string{"d"}) {
		t.Errorf("left out %v, want d", leftOut)
	}
	withdrawn := false
	for _, e := range res.Eliminations {
		withdrawn = withdrawn || (e.Config == "c" && e.Withdrawn && e.Round == 2)
	}
	if !withdrawn {
		t.Errorf("c not withdrawn before round 3: %+v", res.Eliminations)
	}
	if res.Levels[0].Selected != "b" || res.Levels[1].Selected != "a" {
		t.Errorf("selected %s at C=1 and %s at C=8, want b and a", res.Levels[0].Selected, res.Levels[1].Selected)
	}
}

// TestSelectionRacesCapacity: under an objective the race has one more
// column, the SLO capacity, raced like a level: c, never the fastest, has
// the most capacity and is selected there, and stays in the race for it;
// the policy's bands and the envelope are over the loads alone. A launch
// without a capacity leaves the column out, and the note says why.
func TestSelectionRacesCapacity(t *testing.T) {
	figs := map[string][][2]float64{
		"a": wobbly(6, 100, 900, 0), "b": wobbly(6, 130, 600, 1), "c": wobbly(6, 90, 800, 2), "d": wobbly(6, 60, 300, 3),
	}
	caps := map[string]float64{"a": 20, "b": 12, "c": 40, "d": 5}
	v := raceVerdict(6, figs)
	v.Capacity = &verdict.CapacityVerdict{}
	for _, name := range []string{"a", "b", "c", "d"} {
		sc := verdict.ScenarioCapacity{Scenario: name}
		for r := range 6 {
			sc.Launches = append(sc.Launches, verdict.LaunchCapacity{Round: r + 1, Capacity: caps[name] * (1 + 0.02*math.Cos(float64(r)+float64(len(name))))})
		}
		v.Capacity.Scenarios = append(v.Capacity.Scenarios, sc)
	}
	res, _, err := Selection(v, &results.SelectInfo{DeltaPct: 2, PCS: 0.95, FirstStage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Levels) != 3 || res.Levels[2].Level != policy.CapacityLevel || res.Levels[2].Selected != "c" {
		t.Fatalf("levels %+v", res.Levels)
	}
	if res.Levels[0].Selected != "b" || res.Levels[1].Selected != "a" {
		t.Errorf("selected %s and %s, want b and a", res.Levels[0].Selected, res.Levels[1].Selected)
	}
	if got := policy.Sentence(policy.Bands(res)); got != "Serve b up to C=1, a from C=8." {
		t.Errorf("policy %q", got)
	}
	withdrawn := slices.ContainsFunc(res.Eliminations, func(e selection.Elimination) bool { return e.Config == "c" && e.Level == policy.CapacityLevel })
	if withdrawn {
		t.Errorf("c, the most capacity, ruled out there: %+v", res.Eliminations)
	}
	if capacityNote(v) != "" {
		t.Errorf("a note on a race that has its capacity: %s", capacityNote(v))
	}
	v.Capacity.Scenarios[3].Launches = v.Capacity.Scenarios[3].Launches[1:] // d's round 1 has none
	res, _, err = Selection(v, &results.SelectInfo{DeltaPct: 2, PCS: 0.95, FirstStage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Levels) != 2 || capacityNote(v) == "" {
		t.Errorf("levels %d, note %q: want the capacity left out, and said", len(res.Levels), capacityNote(v))
	}
}

// TestSelectionRacesToThePlansLastRound: under a sequential plan the race
// runs to the plan's last round but one, whatever the comparisons with the
// baseline have done to the rounds planned. Once those are all decided the
// verdict's RoundsPlanned is the round after which the last variant
// stopped (here 3 of 6); a race that read it was cut at round 2 with two
// configurations near-tied, launched nothing more, and took its third
// round, a round of the race, for its confirmation.
func TestSelectionRacesToThePlansLastRound(t *testing.T) {
	figs := map[string][][2]float64{
		"a": wobbly(3, 100, 900, 0), "b": wobbly(3, 130, 600, 1), "c": wobbly(3, 101, 895, 2), "d": wobbly(3, 60, 300, 3),
	}
	v := raceVerdict(3, figs)
	v.Sequential = &verdict.SequentialVerdict{MinRounds: 2, MaxRounds: 6}
	if got := LastRound(v); got != 6 {
		t.Errorf("LastRound %d, want the plan's 6", got)
	}
	res, _, err := Selection(v, &results.SelectInfo{DeltaPct: 2, PCS: 0.95, FirstStage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Done || !slices.Contains(res.Next, "a") || !slices.Contains(res.Next, "c") {
		t.Errorf("after 3 of 6 rounds: done %v, next %v; want the race on, a and c still in it", res.Done, res.Next)
	}
	v.Sequential = nil // a fixed design of 3 rounds: the race ends at round 2
	if res, _, _ := Selection(v, &results.SelectInfo{DeltaPct: 2, PCS: 0.95, FirstStage: 2}); !res.Done || res.Rounds != 2 {
		t.Errorf("a fixed design of 3 rounds: done %v after %d rounds, want done after 2", res.Done, res.Rounds)
	}
}
