package slo

import (
	"maps"
	"math"
	"slices"
)

// Point is one level of one launch: its load (concurrent users, or
// requests per second for an open-loop level) and its margins
// (Result.Margins: ≥ 0 where the level meets that part of the objective).
type Point struct {
	Load    float64
	Margins map[string]float64
}

// Meets reports whether the level meets every part of the objective.
func (p Point) Meets() bool {
	for _, m := range p.Margins {
		if !(m >= 0) {
			return false
		}
	}
	return true
}

// Bound says whether a capacity is a value or only a bound.
type Bound string

// Bounds of a capacity.
const (
	// Exact: the capacity lies between two measured levels.
	Exact Bound = ""
	// Above: every level met the objective; the capacity is the top
	// level's load or more.
	Above Bound = "above"
	// Below: the lowest level already missed it; the capacity is under the
	// lowest level's load.
	Below Bound = "below"
)

// Capacity is the highest load at which one launch meets the objective.
// The levels are taken by ascending load up to the first that misses it
// (F); between it and the level before (P), each metric that F misses has
// its margin interpolated linearly in the log of the load, and the
// capacity is the lowest load where one of those lines crosses zero:
//
//	log x = log x_P + (log x_F − log x_P) · m_P / (m_P − m_F).
//
// Latencies of a server under load grow about as a power of the load, so
// their log, and with it the margin log(limit/p99), is close to linear in
// log-load between two levels. Beyond the measured levels nothing is
// extrapolated: when every level meets the objective the capacity is the
// top load with Above, when the lowest misses it the lowest load with
// Below. Levels above the first miss are not looked at: a level that meets
// the objective again after one that missed does not raise the capacity.
// binding is the metric whose line crosses first; ok is false without
// points.
func Capacity(points []Point) (load float64, b Bound, binding string, ok bool) {
	if len(points) == 0 {
		return 0, Exact, "", false
	}
	ps := slices.Clone(points)
	slices.SortStableFunc(ps, func(a, b Point) int {
		switch {
		case a.Load < b.Load:
			return -1
		case a.Load > b.Load:
			return 1
		}
		return 0
	})
	for i, p := range ps {
		if p.Meets() {
			continue
		}
		if i == 0 {
			return p.Load, Below, firstMissed(p), true
		}
		prev := ps[i-1]
		lp, lf := math.Log(prev.Load), math.Log(p.Load)
		best := math.Inf(1)
		for _, name := range slices.Sorted(maps.Keys(p.Margins)) {
			mf := p.Margins[name]
			if mf >= 0 {
				continue
			}
			mp := prev.Margins[name]
			f := mp / (mp - mf)
			if math.IsNaN(f) || math.IsInf(mp, 1) {
				f = 1 // an unbounded margin before a miss: the miss is the edge
			}
			f = math.Min(math.Max(f, 0), 1)
			if x := lp + (lf-lp)*f; x < best {
				best, binding = x, name
			}
		}
		return math.Exp(best), Exact, binding, true
	}
	return ps[len(ps)-1].Load, Above, "", true
}

// firstMissed is the metric with the smallest margin at p.
func firstMissed(p Point) string {
	name, low := "", math.Inf(1)
	for _, k := range slices.Sorted(maps.Keys(p.Margins)) {
		if m := p.Margins[k]; m < low || name == "" {
			name, low = k, m
		}
	}
	return name
}
