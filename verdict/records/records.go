// Package records is what a verdict is computed from: a run's manifest and
// summary, and each scenario's launches with their request records, GPU
// power and server timeline. Read takes them from a run directory; tests
// build an Input in memory. It computes nothing: package verdict decides
// from it, and the notes and explanations read it beside the verdict.
package records

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/timeline"
)

// Input is everything a verdict is computed from: the run's manifest and
// summary, and each scenario's launches with their records.
type Input struct {
	Dir      string
	Manifest results.Manifest
	Summary  results.Summary
	// Launches maps a scenario name to its launches with records, in round
	// order. A failed launch or one never swept is left out (its result is
	// in Summary).
	Launches map[string][]Launch
}

// Launch is one launch (round) of one scenario and its records.
type Launch struct {
	// Round is 1-based; Order is the launch's 0-based position in the whole
	// campaign's launch sequence.
	Round, Order int
	// Host is the host the launch ran on (results.ScenarioResult.HostName);
	// empty when the results do not say.
	Host string
	// Dir is the folder, relative to the run directory, of the attempt the
	// records come from.
	Dir string
	// Result is that attempt's result; nil in tests that build records
	// alone.
	Result  *results.ScenarioResult
	Records []measure.Record
	// Power is the launch's GPU power readings; nil when none were taken.
	Power *measure.PowerLog
	// Timeline is the server's /metrics through the launch's sweep; nil
	// when none was scraped.
	Timeline *timeline.Timeline
}

// Records yields every record of the named scenario, over all launches,
// in place: the checks that read them all would otherwise copy a night of
// records once each.
func (in Input) Records(name string) iter.Seq2[int, *measure.Record] {
	return func(yield func(int, *measure.Record) bool) {
		i := 0
		for _, l := range in.Launches[name] {
			for j := range l.Records {
				if !yield(i, &l.Records[j]) {
					return
				}
				i++
			}
		}
	}
}

// Each yields the records of one slice as Records does a scenario's.
func Each(recs []measure.Record) iter.Seq2[int, *measure.Record] {
	return func(yield func(int, *measure.Record) bool) {
		for j := range recs {
			if !yield(j, &recs[j]) {
				return
			}
		}
	}
}

// Order is the campaign order: the manifest's list, then any scenario only
// the summary knows.
func Order(m results.Manifest, s results.Summary) []string {
	order := slices.Clone(m.Scenarios)
	for _, sr := range s.Scenarios {
		if !slices.Contains(order, sr.Name) {
			order = append(order, sr.Name)
		}
	}
	return order
}

// Read reads the records of every launch of every scenario from the run
// directory (each launch's newest complete attempt, else its newest one, as
// results.Run.Launches says). A run written before rounds reads as one
// round. Failed launches are left out (the summary lists them); a launch
// whose records cannot be read is an error.
func Read(run *results.Run) (Input, error) {
	in := Input{Dir: run.Dir, Manifest: run.Manifest, Summary: run.Summary, Launches: map[string][]Launch{}}
	for _, name := range Order(run.Manifest, run.Summary) {
		for _, l := range run.Launches(name) {
			if l.Result == nil || l.Result.Status == results.StatusFailed {
				continue
			}
			if l.Result.Status == results.StatusPending {
				// Cut: interrupted before it finished (or never swept). Its
				// records stay on disk, but a launch is the unit of the
				// verdict, and half of one is not a round: the scenario's
				// Launches names it, and a resume runs it again.
				continue
			}
			recs, err := run.LaunchRecords(l)
			if err != nil {
				return Input{}, fmt.Errorf("verdict of %s: scenario %s round %d: %w", run.Dir, name, l.Round, err)
			}
			launch := Launch{Round: l.Round, Order: l.Order, Host: l.Result.HostName, Dir: l.Dir, Result: l.Result, Records: recs}
			if p, err := run.LaunchPower(l); err == nil {
				launch.Power = &p
			} else if !errors.Is(err, os.ErrNotExist) {
				return Input{}, fmt.Errorf("verdict of %s: scenario %s round %d: %w", run.Dir, name, l.Round, err)
			}
			if launch.Timeline, err = readTimeline(filepath.Join(run.Dir, filepath.FromSlash(l.Dir), results.MetricsDir, timeline.File)); err != nil {
				return Input{}, fmt.Errorf("verdict of %s: scenario %s round %d: %w", run.Dir, name, l.Round, err)
			}
			in.Launches[name] = append(in.Launches[name], launch)
		}
	}
	return in, nil
}

// readTimeline reads a launch's server timeline; nil without one (a run
// from before timelines, an engine without /metrics). A torn last line, a
// sweep killed mid-write, reads as far as it goes.
func readTimeline(path string) (*timeline.Timeline, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tl, err := timeline.Read(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return tl, nil
}

// ByLevel splits measured records (warm-up left out) by level, then by
// repeat, each repeat in send order.
func ByLevel(recs []measure.Record) map[measure.Level]map[int][]measure.Record {
	out := map[measure.Level]map[int][]measure.Record{}
	for _, r := range recs {
		if r.Warmup {
			continue
		}
		if out[r.Level] == nil {
			out[r.Level] = map[int][]measure.Record{}
		}
		out[r.Level][r.Repeat] = append(out[r.Level][r.Repeat], r)
	}
	for _, reps := range out {
		for _, rs := range reps {
			slices.SortStableFunc(rs, func(a, b measure.Record) int {
				if a.SendNs != b.SendNs {
					return cmp.Compare(a.SendNs, b.SendNs)
				}
				return a.Seq - b.Seq
			})
		}
	}
	return out
}
