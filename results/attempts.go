package results

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
)

// Complete returns the scenario's newest attempt that completed (status
// ok): r itself, or the newest such attempt of its history; nil when none
// did. A rerun that fails or is interrupted leaves the earlier complete
// attempt on disk, and its figures still stand, unless it ran on another
// host of a fleet (sameHost).
func (r *ScenarioResult) Complete() *ScenarioResult {
	if r.Status == StatusOK {
		return r
	}
	for i := len(r.History) - 1; i >= 0; i-- {
		if h := &r.History[i]; h.Status == StatusOK && sameHost(r, h) {
			return h
		}
	}
	return nil
}

// sameHost reports whether two attempts ran on one host, as far as they
// say. A fleet reruns a round whole on another host when its host is lost,
// and within a round every counted launch must share a host: an attempt on
// the lost host no longer stands in for the launch.
func sameHost(a, b *ScenarioResult) bool {
	return a.HostName == "" || b.HostName == "" || a.HostName == b.HostName
}

// AttemptDir is where this attempt's files are, relative to the run
// directory, with forward slashes.
func (r *ScenarioResult) AttemptDir() string {
	if r.Dir != "" {
		return r.Dir
	}
	return r.Name
}

// HistoryDirOf is the folder, relative to the run directory, that holds
// attempt n of a scenario once a later attempt has started, in a run
// written before rounds (LaunchHistoryDir is the one for rounds).
func HistoryDirOf(scenario string, n int) string {
	return path.Join(scenario, HistoryDir, strconv.Itoa(n))
}

// Result returns the newest attempt of the named scenario's launch in its
// earliest round that has one (round 1 in a run written before rounds), or
// nil. Launches gives every round.
func (r *Run) Result(name string) *ScenarioResult {
	var out *ScenarioResult
	for i := range r.Summary.Scenarios {
		sr := &r.Summary.Scenarios[i]
		if sr.Name == name && (out == nil || sr.RoundOf() < out.RoundOf()) {
			out = sr
		}
	}
	return out
}

// ScenarioDir is where the figures of the named scenario's launch in its
// earliest round come from (see Result): the folder of its newest complete
// attempt, else of its newest attempt (which may hold the partial records
// of an interrupted one). Launches gives every round.
func (r *Run) ScenarioDir(name string) string {
	sr := r.Result(name)
	if sr == nil {
		return filepath.Join(r.Dir, name)
	}
	if c := sr.Complete(); c != nil {
		sr = c
	}
	return filepath.Join(r.Dir, filepath.FromSlash(sr.AttemptDir()))
}

// fillHistory gives a summary written before attempts were tracked what the
// newer writer records: each scenario's folder, and its earlier attempts
// from the result.json files kept under history/. An earlier attempt whose
// result.json is missing (the orchestrator was killed during it) has no
// figures to offer and is left out.
func (r *Run) fillHistory() error {
	for i := range r.Summary.Scenarios {
		sr := &r.Summary.Scenarios[i]
		if sr.Dir != "" {
			continue // written by a writer that tracks attempts
		}
		sr.Dir = sr.Name
		hist := filepath.Join(r.Dir, sr.Name, HistoryDir)
		entries, err := os.ReadDir(hist)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			n, err := strconv.Atoi(e.Name())
			if err != nil || !e.IsDir() {
				continue
			}
			var old ScenarioResult
			data, err := os.ReadFile(filepath.Join(hist, e.Name(), ResultFile))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			if err := json.Unmarshal(data, &old); err != nil {
				return err
			}
			old.Dir, old.History = HistoryDirOf(sr.Name, n), nil
			sr.History = append(sr.History, old)
		}
		slices.SortFunc(sr.History, func(a, b ScenarioResult) int { return a.Attempt - b.Attempt })
	}
	return nil
}
