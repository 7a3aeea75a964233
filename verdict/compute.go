package verdict

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Input is everything a verdict is computed from: the run's manifest and
// summary, and each scenario's records. Compute builds it from a run
// directory; tests build it in memory.
type Input struct {
	Dir      string
	Manifest results.Manifest
	Summary  results.Summary
	// Records maps a scenario name to its newest attempt's records.
	Records map[string][]measure.Record
}

// Compute reads each scenario's records from the run directory (its newest
// complete attempt, else its newest one, as results.Run.ScenarioDir says)
// and computes the verdict.
// Scenarios whose status is failed are listed without measurements; a
// scenario whose records cannot be read is an error.
func Compute(run *results.Run, o Options) (*Verdict, error) {
	in := Input{Dir: run.Dir, Manifest: run.Manifest, Summary: run.Summary,
		Records: map[string][]measure.Record{}}
	for _, name := range scenarioOrder(run.Manifest, run.Summary) {
		sr := findResult(run.Summary, name)
		if sr == nil || sr.Status == results.StatusFailed {
			continue
		}
		recs, err := run.Records(name)
		if errors.Is(err, os.ErrNotExist) && sr.Status != results.StatusOK {
			continue // pending: never swept
		}
		if err != nil {
			return nil, fmt.Errorf("verdict of %s: scenario %s: %w", run.Dir, name, err)
		}
		in.Records[name] = recs
	}
	return FromRecords(in, o)
}

// FromRecords computes the verdict from records already in memory.
func FromRecords(in Input, o Options) (*Verdict, error) {
	alpha := o.alpha()
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	v := &Verdict{
		Campaign: in.Manifest.Campaign, Run: in.Manifest.Run, Dir: in.Dir,
		Fingerprint: in.Manifest.Fingerprint, Baseline: in.Manifest.Baseline,
		Alpha: alpha, Confidence: DefaultConfidence,
		MaxTokens: in.Manifest.Sweep.MaxTokens, IgnoreEOS: in.Manifest.Sweep.IgnoreEOS,
		Temperature: in.Manifest.Sweep.Temperature,
	}
	if v.Campaign == "" {
		v.Campaign = in.Summary.Campaign
	}
	if v.Run == "" {
		v.Run = in.Summary.Run
	}
	if v.Fingerprint == "" {
		v.Fingerprint = in.Summary.Fingerprint
	}
	if v.Baseline == "" {
		v.Baseline = in.Summary.Baseline
	}
	if o.Baseline != "" {
		v.Baseline = o.Baseline
	}
	order := scenarioOrder(in.Manifest, in.Summary)
	for name := range in.Records {
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	if !slices.Contains(order, v.Baseline) {
		return nil, fmt.Errorf("verdict: baseline %q is not a scenario of this run (scenarios: %v)", v.Baseline, order)
	}
	levelSet := map[int]bool{}
	for _, name := range order {
		s := Scenario{Name: name, Status: results.StatusPending}
		sr := findResult(in.Summary, name)
		if sr != nil {
			s.Status, s.Attempt, s.Fingerprint = sr.Status, sr.Attempt, sr.Fingerprint
			s.FailedPhase, s.Reason, s.AcceptLength = sr.FailedPhase, sr.Reason, sr.AcceptLength
			s.Dir = sr.AttemptDir()
			if newest := findNewest(in.Summary, name); newest != sr {
				s.Newest = &Attempt{Attempt: newest.Attempt, Status: newest.Status,
					FailedPhase: newest.FailedPhase, Reason: newest.Reason}
			}
		}
		recs, ok := in.Records[name]
		if ok && sr == nil {
			s.Status = results.StatusOK // records without a summary entry: a test
		}
		if !s.Failed() {
			groups := groupLevels(recs)
			for _, c := range sortedKeys(groups) {
				l := measureLevel(c, groups[c], o.maxSlices(), DefaultConfidence, th)
				l.AcceptLength, l.ClientLimited = summaryLevelFacts(in.Summary, name, c)
				l.ClientLimited = l.ClientLimited || clientLimited(&l)
				s.Levels = append(s.Levels, l)
				levelSet[c] = true
			}
		}
		v.Scenarios = append(v.Scenarios, s)
	}
	for c := range levelSet {
		v.Levels = append(v.Levels, c)
	}
	slices.Sort(v.Levels)
	base := v.scenario(v.Baseline)
	for _, c := range v.Levels {
		row := Row{Level: c}
		levels := make([]*Level, len(v.Scenarios))
		for i := range v.Scenarios {
			s := &v.Scenarios[i]
			cell := Cell{Scenario: s.Name}
			if l := s.Level(c); l != nil && len(l.Samples) > 0 {
				levels[i] = l
				cell.Present = true
				cell.Throughput = l.Throughput
				if bl := base.Level(c); s.Name != v.Baseline && bl != nil && len(bl.Samples) > 0 {
					compareCell(&cell, l, bl, th)
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		pickWinner(&row, levels, th)
		v.Rows = append(v.Rows, row)
	}
	v.Crossovers = crossovers(v)
	v.Notes = fairness(v, in)
	return v, nil
}

func (v *Verdict) scenario(name string) *Scenario {
	for i := range v.Scenarios {
		if v.Scenarios[i].Name == name {
			return &v.Scenarios[i]
		}
	}
	return nil
}

// Scenario returns the named scenario, or nil.
func (v *Verdict) Scenario(name string) *Scenario { return v.scenario(name) }

// Cell returns the cell of scenario name at level c, or nil.
func (v *Verdict) Cell(c int, name string) *Cell {
	for i := range v.Rows {
		if v.Rows[i].Level != c {
			continue
		}
		for j := range v.Rows[i].Cells {
			if v.Rows[i].Cells[j].Scenario == name {
				return &v.Rows[i].Cells[j]
			}
		}
	}
	return nil
}

// scenarioOrder is the campaign order: the manifest's list, then any
// scenario only the summary knows.
func scenarioOrder(m results.Manifest, s results.Summary) []string {
	order := slices.Clone(m.Scenarios)
	for _, sr := range s.Scenarios {
		if !slices.Contains(order, sr.Name) {
			order = append(order, sr.Name)
		}
	}
	return order
}

// findResult returns the attempt of the named scenario that the verdict
// takes its figures from: the newest complete one, else the newest.
func findResult(s results.Summary, name string) *results.ScenarioResult {
	sr := findNewest(s, name)
	if sr == nil {
		return nil
	}
	if c := sr.Complete(); c != nil {
		return c
	}
	return sr
}

func findNewest(s results.Summary, name string) *results.ScenarioResult {
	for i := range s.Scenarios {
		if s.Scenarios[i].Name == name {
			return &s.Scenarios[i]
		}
	}
	return nil
}

// summaryLevelFacts returns what only the server could tell (the accept
// length) and the load generator's own client-limited flag, from the
// summary's level summaries, averaged over repeats.
func summaryLevelFacts(s results.Summary, name string, c int) (*float64, bool) {
	sr := findResult(s, name)
	if sr == nil {
		return nil, false
	}
	var sum float64
	var n int
	limited := false
	for _, ls := range sr.Levels {
		if ls.Level != c {
			continue
		}
		limited = limited || ls.ClientLimited
		if ls.AcceptLength != nil {
			sum += *ls.AcceptLength
			n++
		}
	}
	if n == 0 {
		return nil, limited
	}
	mean := sum / float64(n)
	return &mean, limited
}

// clientLimited flags a level whose dispatch lag is a noticeable part of a
// request's latency: the client, not the server, may have set the pace.
func clientLimited(l *Level) bool {
	return l.Latency.P50 > 0 && l.DispatchLagP99 > DefaultClientLagFloor &&
		l.DispatchLagP99 > DefaultClientLagFraction*l.Latency.P50
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
