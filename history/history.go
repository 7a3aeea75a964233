// Package history is a campaign's runs on one host as one series: one
// scenario's throughput at each level, run by run, oldest first, with the
// change points E-divisive means finds in it (package changepoint). A
// nightly baseline-only campaign read this way is a regression monitor:
// the run that introduced a change is named, not only that the latest
// run differs from the one before.
package history

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/changepoint"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// MinRuns is the fewest runs a history is drawn from.
const MinRuns = 2

// DefaultAlpha is the change-point test's level for one history: a
// nightly monitor reads a dozen runs every morning, and at the
// permutation test's usual 5% it would name a change that is not there in
// one history of twenty; at 1% a step of a few times the nights' noise is
// still found (docs/METHOD.md, "A campaign's history").
const DefaultAlpha = 0.01

// DefaultPermutations are enough random orders for a p-value well under
// DefaultAlpha to be told from it.
const DefaultPermutations = 499

// Options choose the series.
type Options struct {
	// Scenario is the scenario followed; "": the newest run's baseline.
	Scenario string
	// Level, when set, keeps that level alone; nil: every level.
	Level *measure.Level
	// Changes tune the change-point search; the zero value is its
	// defaults.
	Changes changepoint.Options
	// SkipUnreadable leaves out a run whose records cannot be read,
	// listing it in Skipped; without it such a run is an error naming it,
	// since a history quietly missing a night can hide the night a figure
	// changed.
	SkipUnreadable bool
}

// Point is one run's figures.
type Point struct {
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
	// Throughput is the scenario's throughput per level, with its interval
	// over the run's launches; a level the run did not measure is absent.
	// Figures are the same in level order, as JSON writes them.
	Throughput map[measure.Level]verdict.Estimate `json:"-"`
	Figures    []Figure                           `json:"figures"`
}

// Figure is one level's figure of a run or a change.
type Figure struct {
	Level      measure.Level     `json:"level"`
	Throughput *verdict.Estimate `json:"throughput,omitempty"`
	DeltaPct   *float64          `json:"delta_pct,omitempty"`
}

// Change is a change point: the run that introduced it and how much the
// figures moved, the means of the runs since the change before (or the
// first) against those up to the next (or the last), per level and over
// all levels.
type Change struct {
	// Index is the change's first run in Points; Run its directory.
	Index int     `json:"index"`
	Run   string  `json:"run"`
	P     float64 `json:"p"`
	// DeltaPct is the geometric mean over the levels; Levels each level's.
	DeltaPct float64                   `json:"delta_pct"`
	Levels   map[measure.Level]float64 `json:"-"`
	Figures  []Figure                  `json:"levels"`
}

// Series is a scenario's history on one host.
type Series struct {
	Campaign string          `json:"campaign"`
	Scenario string          `json:"scenario"`
	Host     string          `json:"host"`
	Levels   []measure.Level `json:"levels"`
	Points   []Point         `json:"points"`
	// Changes are the change points found at significance level Alpha.
	Changes []Change `json:"changes"`
	Alpha   float64  `json:"alpha"`
	// Skipped are the runs left out, each with why.
	Skipped []string `json:"skipped,omitempty"`
}

// Of is the history of runs (any order): those of the newest run's
// campaign, sweep and host, oldest first, the scenario judged in each as
// its report does. It is an error with fewer than MinRuns runs left, or a
// scenario or level none of them measured.
func Of(runs []*results.Run, o Options) (*Series, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs")
	}
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(a, b *results.Run) int { return a.Manifest.Started.Compare(b.Manifest.Started) })
	newest := runs[len(runs)-1]
	s := &Series{Campaign: newest.Manifest.Campaign, Host: newest.Manifest.Host.Name, Scenario: o.Scenario}
	if s.Scenario == "" {
		s.Scenario = newest.Manifest.Baseline
	}
	levels := map[measure.Level]bool{}
	scenarios := map[string]bool{}
	for _, r := range runs {
		switch {
		case r.Manifest.Campaign != s.Campaign:
			s.Skipped = append(s.Skipped, fmt.Sprintf("%s: campaign %s, not %s", r.Dir, r.Manifest.Campaign, s.Campaign))
			continue
		case r.Manifest.Host.Name != s.Host:
			s.Skipped = append(s.Skipped, fmt.Sprintf("%s: host %s, not %s", r.Dir, r.Manifest.Host.Name, s.Host))
			continue
		case r.Manifest.Fingerprint != newest.Manifest.Fingerprint:
			s.Skipped = append(s.Skipped, fmt.Sprintf("%s: another sweep (fingerprint %s)", r.Dir, short(r.Manifest.Fingerprint)))
			continue
		}
		v, err := decide(r)
		if err != nil && !o.SkipUnreadable {
			return nil, &results.UnreadableError{Run: r.Dir, Err: err}
		}
		if err != nil {
			s.Skipped = append(s.Skipped, fmt.Sprintf("%s: %v", r.Dir, err))
			continue
		}
		for _, sc := range v.Scenarios {
			scenarios[sc.Name] = true
		}
		p := Point{Run: r.Dir, Started: r.Manifest.Started, Throughput: map[measure.Level]verdict.Estimate{}}
		if sc := v.Scenario(s.Scenario); sc != nil && !sc.Failed() {
			for _, l := range sc.Levels {
				if l.Throughput.Center > 0 && !l.Saturated && (o.Level == nil || l.Level == *o.Level) {
					p.Throughput[l.Level] = l.Throughput
					levels[l.Level] = true
				}
			}
		}
		if len(p.Throughput) == 0 {
			s.Skipped = append(s.Skipped, fmt.Sprintf("%s: %s has no measurement there", r.Dir, s.Scenario))
			continue
		}
		s.Points = append(s.Points, p)
	}
	switch {
	case len(s.Points) == 0 && !scenarios[s.Scenario] && len(scenarios) > 0:
		return nil, fmt.Errorf("no run has a scenario %q (the runs have %s)", s.Scenario, strings.Join(slices.Sorted(maps.Keys(scenarios)), ", "))
	case len(s.Points) == 0 && o.Level != nil:
		return nil, fmt.Errorf("no run measured %s at %s", s.Scenario, measure.LevelName(*o.Level))
	case len(s.Points) < MinRuns:
		return nil, fmt.Errorf("%d run of %s on %s to draw a history from; it needs %d", len(s.Points), s.Campaign, HostWords(s.Host), MinRuns)
	}
	s.Levels = slices.SortedFunc(maps.Keys(levels), measure.Level.Compare)
	if o.Changes.Alpha <= 0 {
		o.Changes.Alpha = DefaultAlpha
	}
	if o.Changes.Permutations <= 0 {
		o.Changes.Permutations = DefaultPermutations
	}
	s.Alpha = o.Changes.Alpha
	s.Changes = changes(s, o.Changes)
	for i := range s.Points {
		p := &s.Points[i]
		for _, c := range s.Levels {
			if e, ok := p.Throughput[c]; ok {
				p.Figures = append(p.Figures, Figure{Level: c, Throughput: &e})
			}
		}
	}
	for i := range s.Changes {
		ch := &s.Changes[i]
		for _, c := range s.Levels {
			if d, ok := ch.Levels[c]; ok {
				ch.Figures = append(ch.Figures, Figure{Level: c, DeltaPct: &d})
			}
		}
	}
	return s, nil
}

// changes finds the series' change points on each run's log throughput at
// the levels every run measured (a level one run lacks would make its
// point incomparable), and says how much each moved.
func changes(s *Series, o changepoint.Options) []Change {
	var common []measure.Level
	for _, c := range s.Levels {
		all := true
		for _, p := range s.Points {
			_, ok := p.Throughput[c]
			all = all && ok
		}
		if all {
			common = append(common, c)
		}
	}
	if len(common) == 0 {
		return nil
	}
	xs := make([][]float64, len(s.Points))
	for i, p := range s.Points {
		for _, c := range common {
			xs[i] = append(xs[i], math.Log(p.Throughput[c].Center))
		}
	}
	found := changepoint.Find(xs, o)
	var out []Change
	for k, cp := range found {
		lo, hi := 0, len(xs)
		if k > 0 {
			lo = found[k-1].At
		}
		if k+1 < len(found) {
			hi = found[k+1].At
		}
		ch := Change{Index: cp.At, Run: s.Points[cp.At].Run, P: cp.P, Levels: map[measure.Level]float64{}}
		var sum float64
		for j, c := range common {
			before, after := meanAt(xs[lo:cp.At], j), meanAt(xs[cp.At:hi], j)
			ch.Levels[c] = 100 * math.Expm1(after-before)
			sum += after - before
		}
		ch.DeltaPct = 100 * math.Expm1(sum/float64(len(common)))
		out = append(out, ch)
	}
	return out
}

func meanAt(xs [][]float64, j int) float64 {
	var s float64
	for _, x := range xs {
		s += x[j]
	}
	return s / float64(len(xs))
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return fp
}

// HostWords names a host for people: its name, or that the runs did not
// record one.
func HostWords(h string) string {
	if h == "" {
		return "a host the runs do not name"
	}
	return h
}

// decide is the rule's verdict of a run, its figures and decisions without
// the explanations and notes a history does not show: a history reads
// every run of a campaign.
func decide(r *results.Run) (*verdict.Verdict, error) {
	in, err := records.Read(r)
	if err != nil {
		return nil, err
	}
	return verdict.DecideRun(in, verdict.Options{})
}
