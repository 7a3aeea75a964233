package verdict

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// measureScenario computes every level of one scenario over its launches.
// ps are the percentiles the latencies are given at. With a metric (nil:
// throughput), each launch's Throughput is that metric's value instead,
// turned so that higher is better (metricValue), and the launches give no
// within-launch samples: the verdict decides the metric with the machinery
// it decides throughput with.
//
// from, when not nil, is the same scenario's levels as the throughput
// verdict measured them: their pooled figures are taken from it rather
// than made again, as they do not depend on the metric.
func measureScenario(launches []records.Launch, maxSlices int, ps []float64, metric *measure.Metric, from *Scenario) []Level {
	type launchGroups struct {
		l      records.Launch
		groups map[measure.Level]map[int][]measure.Record
	}
	var gs []launchGroups
	levels := map[measure.Level]bool{}
	for _, l := range launches {
		g := records.ByLevel(l.Records)
		for c := range g {
			levels[c] = true
		}
		gs = append(gs, launchGroups{l, g})
	}
	var out []Level
	for _, c := range slices.SortedFunc(maps.Keys(levels), measure.Level.Compare) {
		l := Level{Level: c}
		var acc levelAcc
		for _, g := range gs {
			if reps, ok := g.groups[c]; ok {
				acc.add(&l, g.l, c, reps, maxSlices, metric)
			}
		}
		if done := from.Level(c); done != nil {
			l.Figures, l.Categories, l.Sessions = done.Figures, done.Categories, done.Sessions
			l.SliceSeconds = done.SliceSeconds
		} else {
			acc.finish(&l, ps)
		}
		out = append(out, l)
	}
	return out
}

// levelAcc accumulates one level's launches and repeats.
type levelAcc struct {
	sampleSec float64
	repeats   [][]measure.Record // every launch's, for the figures and the categories
}

// add measures one launch's repeats of level c into l.
func (a *levelAcc) add(l *Level, launch records.Launch, c measure.Level, reps map[int][]measure.Record, maxSlices int, metric *measure.Metric) {
	ll := LaunchLevel{Round: launch.Round, Order: launch.Order, Host: launch.Host}
	var tok, sec float64
	for _, id := range slices.Sorted(maps.Keys(reps)) {
		recs := reps[id]
		l.Repeats++
		a.repeats = append(a.repeats, recs)
		if measure.IsRate(c) && !l.Saturated {
			if sat := measure.SaturationOf(recs); sat.Saturated {
				l.Saturated = true
				l.Saturation = fmt.Sprintf("round %d: %s", launch.Round, sat.Reason)
			}
		}
		tp := measure.LevelThroughput(recs, c, maxSlices)
		if !tp.SamplesOK {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s round %d repeat %d: %s", measure.LevelName(c), launch.Round, id, tp.Note))
		}
		tok += tp.Tokens
		sec += tp.Window.Seconds()
		lag, slot := measure.PaceSums(recs, tp.Window, tp.Steady)
		ll.paceLag += lag
		ll.paceSlot += slot
		a.sampleSec += tp.SampleSeconds * float64(len(tp.Samples))
		ll.Samples = append(ll.Samples, tp.Samples...)
	}
	if sec > 0 {
		ll.Throughput = tok / sec
	}
	if metric != nil {
		ll.Throughput, ll.Samples = metricValue(*metric, c, reps), nil
	}
	l.Samples = append(l.Samples, ll.Samples...)
	l.Launches = append(l.Launches, ll)
}

// metricValue is metric's value over one launch's repeats, as the
// comparisons take it: higher is better, so a latency is given as its
// reciprocal (MetricVerdict turns it back); 0 when the launch has none.
func metricValue(metric measure.Metric, c measure.Level, reps map[int][]measure.Record) float64 {
	all := make([][]measure.Record, 0, len(reps))
	for _, id := range slices.Sorted(maps.Keys(reps)) {
		all = append(all, reps[id])
	}
	x, ok := metric.Of(c, all...)
	switch {
	case !ok:
		return 0
	case metric.Lower:
		return 1 / x
	}
	return x
}

func (a *levelAcc) finish(l *Level, ps []float64) {
	l.Figures = measure.LevelFiguresAt(l.Level, ps, a.repeats...)
	l.Categories = measure.Categories(l.Level, a.repeats...)
	l.Sessions = measure.SessionsOf(a.repeats...)
	if l.SteadySeconds > 0 {
		l.SliceSeconds = a.sampleSec / float64(max(len(l.Samples), 1))
	}
}

// measured reports whether the level has a throughput to compare: a
// saturated level has none.
func (l *Level) measured() bool {
	if l.Saturated {
		return false
	}
	for _, ll := range l.Launches {
		if ll.Throughput > 0 {
			return true
		}
	}
	return false
}

// scenarioIntervals sets every level's Throughput: the geometric mean of its
// launches with the interval from the scenario's launch-to-launch variance
// (pooled over its levels), or, with one launch, from the within-launch
// samples.
func scenarioIntervals(s *Scenario, conf float64) {
	rounds := roundIndex(s.Levels)
	table := make([][]float64, len(s.Levels))
	for i := range s.Levels {
		table[i] = launchRow(&s.Levels[i], rounds)
	}
	lv := rule.PooledVar(table)
	for i := range s.Levels {
		l := &s.Levels[i]
		mean, n := rule.RowMean(table[i])
		if n == 0 {
			continue
		}
		e := rule.Diff{D: mean}
		switch {
		case lv.DF > 0:
			e.SE, e.DF = math.Sqrt(lv.Var/float64(n)), lv.DF
		default:
			_, vb, nb := rule.LogMoments(l.Samples)
			if nb >= 2 {
				e.SE, e.DF = math.Sqrt(vb/float64(nb)), float64(nb-1)
			}
		}
		lo, hi := e.Interval(conf)
		l.Throughput = Estimate{Center: math.Exp(mean), Lo: math.Exp(lo), Hi: math.Exp(hi), Confidence: conf, N: n}
		if !e.OK() {
			l.Throughput.Lo, l.Throughput.Hi = l.Throughput.Center, l.Throughput.Center
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: one launch with %d within-launch sample(s): no confidence interval", measure.LevelName(l.Level), len(l.Samples)))
		}
	}
}

// roundIndex maps every round measured at any of levels to a column.
func roundIndex(levels []Level) map[int]int {
	set := map[int]bool{}
	for _, l := range levels {
		for _, ll := range l.Launches {
			set[ll.Round] = true
		}
	}
	idx := map[int]int{}
	for i, r := range slices.Sorted(maps.Keys(set)) {
		idx[r] = i
	}
	return idx
}

// launchRow is the level's log throughput per round column (NaN where the
// round has none).
func launchRow(l *Level, rounds map[int]int) []float64 {
	row := make([]float64, len(rounds))
	for i := range row {
		row[i] = math.NaN()
	}
	for _, ll := range l.Launches {
		if ll.Throughput > 0 {
			row[rounds[ll.Round]] = math.Log(ll.Throughput)
		}
	}
	return row
}

// pctOf turns a log ratio into a percentage change: 100·(e^x − 1).
func pctOf(x float64) float64 { return 100 * math.Expm1(x) }
