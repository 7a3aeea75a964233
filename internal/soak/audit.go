package soak

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// LaunchAudit is what one attempt of one launch left on disk, set against
// what its server says it answered.
type LaunchAudit struct {
	Scenario    string
	Round       int
	Attempt     int
	Dir         string // relative to the run directory
	Status      string
	FailedPhase string
	// HaveLog is false when the attempt has no server.log (its host was
	// lost before the log could be fetched): Served is then unknown.
	HaveLog bool
	// Served is how many completions the server answered in full: its
	// access-log lines for POST on a completions path with status 200 (the
	// sim, as uvicorn, writes the line once the answer is complete).
	Served int
	// Smoke is 1 when the attempt passed its smoke request, which is one
	// of the served completions but no record.
	Smoke int
	// Recorded is how many records on disk succeeded, warm-up included.
	Recorded int
	// Lost is Served − Smoke − Recorded: answered in full but not on
	// disk. Phantom is the opposite: recorded as a success with no answer
	// in the server's log. Both must be 0.
	Lost, Phantom int
	// Short lists the levels of a completed attempt with fewer successful
	// measured records than the sweep asked for, or whose levels.json
	// counts differ from the records on disk ("level 4: 11 of 12").
	Short []string
}

// completionLine matches the sim's access-log line for a completion answered
// in full.
var completionLine = regexp.MustCompile(`"POST /v1/(chat/)?completions HTTP/1\.1" 200 `)

// Audit reads every attempt of every launch of a run (the newest and those
// in history) and sets its records against its server's log. requests is
// how many measured requests each level asks for.
func Audit(runDir string, requests int) ([]LaunchAudit, error) {
	run, err := results.ReadRun(runDir)
	if err != nil {
		return nil, fmt.Errorf("auditing %s: %w", runDir, err)
	}
	var out []LaunchAudit
	for i := range run.Summary.Scenarios {
		sr := &run.Summary.Scenarios[i]
		attempts := append([]results.ScenarioResult{*sr}, sr.History...)
		for j := range attempts {
			a, err := auditAttempt(runDir, &attempts[j], sr.RoundOf(), requests)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Round != b.Round {
			return a.Round < b.Round
		}
		return a.Attempt < b.Attempt
	})
	return out, nil
}

func auditAttempt(runDir string, sr *results.ScenarioResult, round, requests int) (LaunchAudit, error) {
	a := LaunchAudit{Scenario: sr.Name, Round: round, Attempt: sr.Attempt, Dir: sr.AttemptDir(),
		Status: sr.Status, FailedPhase: sr.FailedPhase}
	dir := filepath.Join(runDir, filepath.FromSlash(a.Dir))
	served, err := countServed(filepath.Join(dir, results.ServerLog))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return a, err
	default:
		a.HaveLog, a.Served = true, served
	}
	if _, ok := sr.PhaseSeconds["smoke"]; ok && sr.FailedPhase != "smoke" {
		a.Smoke = 1
	}
	perLevel := map[measure.Level]int{}
	recs, err := results.ReadRecords(filepath.Join(dir, results.RequestsFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return a, fmt.Errorf("auditing %s: %w", a.Dir, err)
	}
	for _, r := range recs {
		if !r.OK() {
			continue
		}
		a.Recorded++
		if !r.Warmup {
			perLevel[r.Level]++
		}
	}
	if a.HaveLog {
		d := a.Served - a.Smoke - a.Recorded
		a.Lost, a.Phantom = max(d, 0), max(-d, 0)
	}
	if sr.Status == results.StatusOK {
		if len(sr.Levels) == 0 {
			a.Short = append(a.Short, "no levels")
		}
		for _, l := range sr.Levels {
			if got := perLevel[l.Level]; got != requests || l.OK != got {
				a.Short = append(a.Short, fmt.Sprintf("%s: %d on disk, %d in levels.json, %d asked", l.Level, got, l.OK, requests))
			}
		}
	}
	return a, nil
}

// countServed counts the completions a server log says were answered.
func countServed(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		if completionLine.Match(sc.Bytes()) {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return n, nil
}
