package rundiff

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Two runs are two nights: everything common to one run's launches (the
// host's load, clocks and thermal state, the page cache, a driver's mood)
// is a run effect that the launches of one run cannot see, as the launch
// effect is one that a single launch cannot. A diff that judged two runs'
// absolute figures with the launch-to-launch variance alone called
// identical code REGRESSED; this file learns the run effect from a
// campaign's history and judges absolute changes with it, and judges each
// variant's ratio to its own run's baseline, in which the run effect
// cancels, without any (docs/METHOD.md, "Two runs").

// MinHistory is the fewest runs of history (other runs of the same
// campaign, sweep and host) from which the run effect is estimated: two
// runs give one degree of freedom, whose t quantile (12.7 at 95%) would
// hide any change; three give two (4.3), the fewest worth judging by.
const MinHistory = 3

// DefaultHistoryRuns is how many of the newest runs of history are read:
// a host whose state changed (a new driver, a new neighbour) relearns its
// run effect within that many nights, and a diff does not judge a year of
// runs to answer.
const DefaultHistoryRuns = 12

// RunEffect is the run-to-run variance of a campaign's level means on a
// host, in (log units)², estimated from its history: per scenario and
// level, the variance of the runs' mean log throughputs less the mean of
// their within-run variances (the method of moments of a one-way random
// effects model), pooled over scenarios and levels, floored at zero. Its
// df are the history's runs less one: levels and scenarios of one run
// share its draw, so they add no independent runs.
type RunEffect struct {
	// Runs are the history's run directories, oldest first.
	Runs []string `json:"runs"`
	Var  float64  `json:"var"`
	DF   float64  `json:"df"`
	// SDPct is the run effect's standard deviation as a percentage.
	SDPct float64 `json:"sd_pct"`
}

// Enough reports whether the history has MinHistory runs or more.
func (e *RunEffect) Enough() bool { return e != nil && len(e.Runs) >= MinHistory }

// levelMean is one run's mean log throughput at a level over its launches,
// with the variance of that mean from its launch-to-launch spread; w is
// NaN with one launch.
type levelMean struct{ m, w float64 }

func meanOf(l *verdict.Level) (levelMean, bool) {
	var xs []float64
	for _, ll := range l.Launches {
		if ll.Throughput > 0 {
			xs = append(xs, math.Log(ll.Throughput))
		}
	}
	if len(xs) == 0 {
		return levelMean{}, false
	}
	m, ss := 0.0, 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	w := math.NaN()
	if len(xs) > 1 {
		w = ss / float64(len(xs)-1) / float64(len(xs))
	}
	return levelMean{m, w}, true
}

// learnRunEffect estimates the run effect from the verdicts of the
// history's runs (dirs, in the same order).
func learnRunEffect(history []*verdict.Verdict, dirs []string) *RunEffect {
	out := &RunEffect{Runs: dirs, DF: float64(len(history) - 1)}
	type key struct {
		s string
		c measure.Level
	}
	means := map[key][]levelMean{}
	var order []key
	for _, v := range history {
		for i := range v.Scenarios {
			s := &v.Scenarios[i]
			if s.Failed() {
				continue
			}
			for j := range s.Levels {
				l := &s.Levels[j]
				if l.Saturated {
					continue
				}
				if lm, ok := meanOf(l); ok {
					k := key{s.Name, l.Level}
					if _, seen := means[k]; !seen {
						order = append(order, k)
					}
					means[k] = append(means[k], lm)
				}
			}
		}
	}
	var num, den float64
	for _, k := range order {
		ms := means[k]
		if len(ms) < 2 {
			continue
		}
		var mean, wsum float64
		nw := 0
		for _, x := range ms {
			mean += x.m
			if !math.IsNaN(x.w) {
				wsum += x.w
				nw++
			}
		}
		mean /= float64(len(ms))
		var s2 float64
		for _, x := range ms {
			s2 += (x.m - mean) * (x.m - mean)
		}
		s2 /= float64(len(ms) - 1)
		within := 0.0
		if nw > 0 {
			within = wsum / float64(nw)
		}
		df := float64(len(ms) - 1)
		num += df * (s2 - within)
		den += df
	}
	if den > 0 {
		out.Var = math.Max(0, num/den)
	}
	out.SDPct = 100 * math.Expm1(math.Sqrt(out.Var))
	return out
}

// HistoryOf picks, from candidate runs, the history of a diff of old and
// new: the runs of new's campaign, sweep (fingerprint) and host other than
// new itself, the newest DefaultHistoryRuns, oldest first. skipped says
// which candidates were left out and why, for the diff's header.
func HistoryOf(old, new *results.Run, candidates []*results.Run) (history []*results.Run, skipped []string) {
	for _, r := range candidates {
		switch {
		case SameDir(r.Dir, new.Dir):
			continue
		case r.Manifest.Campaign != new.Manifest.Campaign:
			continue
		case r.Manifest.Fingerprint != new.Manifest.Fingerprint:
			skipped = append(skipped, fmt.Sprintf("%s: another sweep (fingerprint %s)", r.Dir, shortFP(r.Manifest.Fingerprint)))
			continue
		case r.Manifest.Host.Name != new.Manifest.Host.Name:
			skipped = append(skipped, fmt.Sprintf("%s: another host (%s)", r.Dir, r.Manifest.Host.Name))
			continue
		}
		history = append(history, r)
	}
	slices.SortStableFunc(history, func(a, b *results.Run) int { return a.Manifest.Started.Compare(b.Manifest.Started) })
	if n := len(history); n > DefaultHistoryRuns {
		history = history[n-DefaultHistoryRuns:]
	}
	return history, skipped
}

// RatioRow is one variant's ratio to the baseline at one level in both
// runs, and its change: new's ratio over old's, each paired by round within
// its own run, so that the run effect cancels.
type RatioRow struct {
	Variant  string        `json:"variant"`
	Baseline string        `json:"baseline"`
	Level    measure.Level `json:"level"`
	// OldPct and NewPct are the variant against the baseline in each run,
	// percent.
	OldPct float64 `json:"old_pct"`
	NewPct float64 `json:"new_pct"`
	// Comparison is the change of the ratio, new against old, decided in
	// the diff's family.
	verdict.Comparison
	// Regression is a significant fall of the ratio beyond the threshold;
	// Improvement a rise beyond it.
	Regression  bool `json:"regression,omitempty"`
	Improvement bool `json:"improvement,omitempty"`
	// DoubtedIn names the runs ("OLD", "NEW") whose own verdict doubted
	// the variant against the baseline at this level (a cache one side
	// cleared, a host busy for one side, a GPU held down, a paced
	// client): a doubted ratio may carry the very bias the diff would
	// read as a change, so the row is OutcomeDoubted with those doubts,
	// outside the family, and can be no regression.
	DoubtedIn []string `json:"doubted_in,omitempty"`
}

// cellDoubts are the doubts of v's comparison of scenario name with the
// baseline at level c, when v doubted it.
func cellDoubts(v *verdict.Verdict, c measure.Level, name string) []verdict.Doubt {
	cell := v.Cell(c, name)
	if cell == nil || cell.Outcome != verdict.OutcomeDoubted {
		return nil
	}
	return cell.Doubts
}

// ratioRows compares every variant's ratio to the baseline between the
// runs, at each level both runs paired it; one comparison each, in row
// order, a doubted one already OutcomeDoubted.
func ratioRows(vo, vn *verdict.Verdict) ([]RatioRow, []*verdict.Comparison) {
	bo, bn := vo.Scenario(vo.Baseline), vn.Scenario(vn.Baseline)
	if bo == nil || bn == nil || vo.Baseline != vn.Baseline || bo.Failed() || bn.Failed() {
		return nil, nil
	}
	var rows []RatioRow
	var family []*verdict.Comparison
	for _, so := range vo.Scenarios {
		if so.Name == vo.Baseline || so.Failed() {
			continue
		}
		sn := vn.Scenario(so.Name)
		if sn == nil || sn.Failed() {
			continue
		}
		co, cn := verdict.ComparePaired(bo, &so, vn.Confidence), verdict.ComparePaired(bn, sn, vn.Confidence)
		for _, c := range vn.Levels {
			a, b := co[c], cn[c]
			if a == nil || b == nil {
				continue
			}
			rc := verdict.RatioChange(a, b, vn.Confidence)
			if rc == nil {
				continue
			}
			row := RatioRow{Variant: so.Name, Baseline: vo.Baseline, Level: c, OldPct: a.DeltaPct, NewPct: b.DeltaPct}
			if ds, in := sidesDoubts(cellDoubts(vo, c, so.Name), cellDoubts(vn, c, so.Name)); len(in) > 0 {
				verdict.MarkDoubted(rc, ds)
				row.DoubtedIn = in
			}
			rows = append(rows, row)
			family = append(family, rc)
		}
	}
	return rows, family
}

// SameDir reports whether two run directories name the same folder,
// however they were written ("results/x/", "./results/x").
func SameDir(a, b string) bool {
	aa, errA := filepath.Abs(a)
	bb, errB := filepath.Abs(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return aa == bb
}
