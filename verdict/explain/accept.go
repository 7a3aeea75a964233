package explain

import (
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// SourceRequests names an accept length made from the requests' own counts
// when the results do not say which engine field they came from.
const SourceRequests = "the requests' own counts: Σ completion tokens / Σ target steps over each level's window"

// levelAccept is level c's acceptance over launches: from the requests'
// own counts where any launch's records carry them, else from the level
// summaries the sweep wrote (the increase of the server's counters). nil
// when neither has a figure.
func levelAccept(launches []records.Launch, c measure.Level, conf float64) *verdict.LevelAccept {
	var out verdict.LevelAccept
	var pooled [][]measure.Record
	cats := map[string][]float64{}
	for _, l := range launches {
		reps := launchRepeats(l, c)
		pooled = append(pooled, reps...)
		if a, ok := measure.LevelAcceptance(c, reps...); ok {
			out.Launches = append(out.Launches, a.Length)
			for cat, ca := range measure.CategoryAcceptance(c, reps...) {
				cats[cat] = append(cats[cat], ca.Length)
			}
		}
	}
	if len(out.Launches) > 0 {
		a, _ := measure.LevelAcceptance(c, pooled...)
		out.AcceptRate, out.StepShares, out.PositionRates = a.AcceptRate, a.StepShares, a.PositionRates
		out.Source = summarySource(launches, c, true)
		for _, cat := range slices.Sorted(maps.Keys(cats)) {
			out.Categories = append(out.Categories, verdict.CategoryAccept{Category: cat, Length: geoEstimate(cats[cat], conf), Launches: cats[cat]})
		}
	} else {
		for _, l := range launches {
			if v, ok := summaryAccept(l, c); ok {
				out.Launches = append(out.Launches, v)
			}
		}
		if len(out.Launches) == 0 {
			return nil
		}
		out.Source = summarySource(launches, c, false)
	}
	out.Length = geoEstimate(out.Launches, conf)
	return &out
}

// launchRepeats are one launch's records at level c, one slice per repeat,
// warm-up left out.
func launchRepeats(l records.Launch, c measure.Level) [][]measure.Record {
	byRepeat := map[int][]measure.Record{}
	for _, r := range l.Records {
		if r.Level == c && !r.Warmup {
			byRepeat[r.Repeat] = append(byRepeat[r.Repeat], r)
		}
	}
	var out [][]measure.Record
	for _, k := range slices.Sorted(maps.Keys(byRepeat)) {
		out = append(out, byRepeat[k])
	}
	return out
}

// summaryAccept is the mean over a launch's repeats of level c of the
// accept length its sweep wrote.
func summaryAccept(l records.Launch, c measure.Level) (float64, bool) {
	if l.Result == nil {
		return 0, false
	}
	var sum float64
	n := 0
	for _, ls := range l.Result.Levels {
		if ls.Level == c && ls.AcceptLength != nil {
			sum += *ls.AcceptLength
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// summarySource is the sources the sweeps named for level c, distinct, in
// launch order. With perRequest the figures come from the records, and a
// sweep that named none (or results that do not say) gives SourceRequests.
func summarySource(launches []records.Launch, c measure.Level, perRequest bool) string {
	var srcs []string
	for _, l := range launches {
		if l.Result == nil {
			continue
		}
		for _, ls := range l.Result.Levels {
			if ls.Level == c && ls.AcceptLengthSource != "" && !slices.Contains(srcs, ls.AcceptLengthSource) {
				srcs = append(srcs, ls.AcceptLengthSource)
			}
		}
	}
	if perRequest && len(srcs) != 1 {
		// None named, or the sweeps fell back to counters in some launch:
		// the verdict's figure is the records' all the same.
		return SourceRequests
	}
	return strings.Join(srcs, "; ")
}

// geoEstimate is the geometric mean of xs (positive) with its two-sided
// conf interval from the spread of their logs (Student t, n − 1 degrees of
// freedom); with one value, no interval.
func geoEstimate(xs []float64, conf float64) verdict.Estimate {
	m, v, n := rule.LogMoments(xs)
	e := verdict.Estimate{Center: math.Exp(m), Lo: math.Exp(m), Hi: math.Exp(m), Confidence: conf, N: n}
	if n < 2 {
		return e
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-conf)/2)
	h := t * math.Sqrt(v/float64(n))
	e.Lo, e.Hi = math.Exp(m-h), math.Exp(m+h)
	return e
}
