package results

import (
	"path"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// Launch is one launch of one scenario: the figures of one round, from that
// round's newest complete attempt (else its newest attempt).
type Launch struct {
	Scenario string
	Round    int // 1-based
	// Order is the 0-based position of this launch in the whole campaign's
	// launch sequence (round by round, each round in its Manifest.Order).
	Order  int
	Result *ScenarioResult // the attempt the figures come from
	// Dir is that attempt's folder, relative to the run directory, with
	// forward slashes.
	Dir string
}

// LaunchDir is the folder of a scenario's launch in a round (1-based),
// relative to the run directory: SCENARIO/round-K.
func LaunchDir(scenario string, round int) string {
	return path.Join(scenario, RoundDirPrefix+strconv.Itoa(round))
}

// LaunchHistoryDir is the folder that holds attempt n of a scenario's
// launch in a round once a later attempt has started:
// SCENARIO/round-K/history/N.
func LaunchHistoryDir(scenario string, round, n int) string {
	return path.Join(LaunchDir(scenario, round), HistoryDir, strconv.Itoa(n))
}

// RoundOf is a result's round: its Round, or 1 for a result written before
// rounds.
func (r *ScenarioResult) RoundOf() int { return max(r.Round, 1) }

// Rounds is how many rounds the run was asked for: the manifest's count (0
// in runs written before rounds, which means 1), or more when the summary
// holds a later round (a run extended by a resume with more rounds). Rounds
// split into parts over a fleet count as the replicates they are parts of.
func (r *Run) Rounds() int {
	if r.Manifest.Split() {
		n := max(r.Manifest.Rounds, 1)
		for _, x := range r.Manifest.Replicates {
			n = max(n, x)
		}
		return n
	}
	n := max(r.Manifest.Rounds, len(r.Manifest.Order), 1)
	for i := range r.Summary.Scenarios {
		n = max(n, r.Summary.Scenarios[i].RoundOf())
	}
	return n
}

// Launches returns the scenario's launches, one per round that has a
// result, in round order.
func (r *Run) Launches(name string) []Launch {
	var out []Launch
	for i := range r.Summary.Scenarios {
		sr := &r.Summary.Scenarios[i]
		if sr.Name != name {
			continue
		}
		from := sr
		if c := sr.Complete(); c != nil {
			from = c
		}
		round := sr.RoundOf()
		out = append(out, Launch{Scenario: name, Round: round, Order: r.launchOrder(name, round),
			Result: from, Dir: from.AttemptDir()})
	}
	slices.SortStableFunc(out, func(a, b Launch) int { return a.Round - b.Round })
	return out
}

// LaunchRecords reads the request records of one launch.
func (r *Run) LaunchRecords(l Launch) ([]measure.Record, error) {
	return ReadRecords(filepath.Join(r.Dir, filepath.FromSlash(l.Dir), RequestsFile))
}

// launchOrder is the position of a scenario's launch in a round within the
// whole campaign's launch sequence. A run written before rounds has no
// Order: its one round went in campaign order.
func (r *Run) launchOrder(name string, round int) int {
	pos := 0
	for k := 0; k < round-1 && k < len(r.Manifest.Order); k++ {
		pos += len(r.Manifest.Order[k])
	}
	if round-1 < len(r.Manifest.Order) {
		if i := slices.Index(r.Manifest.Order[round-1], name); i >= 0 {
			return pos + i
		}
	}
	// No recorded order for this round: campaign order, after the rounds
	// that have one.
	n := len(r.Manifest.Scenarios)
	pos += max(0, round-1-len(r.Manifest.Order)) * n
	if i := slices.Index(r.Manifest.Scenarios, name); i >= 0 {
		return pos + i
	}
	return pos
}

// LaunchPower reads the GPU power readings of one launch; a launch without
// them (power.source off, a run from before energy) gives an error that
// wraps os.ErrNotExist.
func (r *Run) LaunchPower(l Launch) (measure.PowerLog, error) {
	var p measure.PowerLog
	err := readJSON(filepath.Join(r.Dir, filepath.FromSlash(l.Dir), PowerFile), &p)
	return p, err
}
