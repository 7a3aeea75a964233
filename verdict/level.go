package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"golang.org/x/perf/benchmath"
)

// levelKey identifies one repeat of one level.
type levelKey struct{ level, repeat int }

// groupLevels splits measured records (warm-up left out) by level, then by
// repeat, each repeat in send order.
func groupLevels(recs []measure.Record) map[int]map[int][]measure.Record {
	out := map[int]map[int][]measure.Record{}
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

// measureLevel computes one level of one scenario from its repeats.
func measureLevel(level int, reps map[int][]measure.Record, maxSlices int, conf float64, th *benchmath.Thresholds) Level {
	l := Level{Level: level, Repeats: len(reps), FailedByClass: map[string]int{}}
	var perReq, lat, ttft, tpot, lags []float64
	var steadyTok, steadySec, sampleSec, wallTok, wallSec, busy float64
	repeatIDs := make([]int, 0, len(reps))
	for id := range reps {
		repeatIDs = append(repeatIDs, id)
	}
	slices.Sort(repeatIDs)
	for _, id := range repeatIDs {
		recs := reps[id]
		for _, r := range recs {
			l.Requests++
			lags = append(lags, float64(r.DispatchLagNs)/1e9)
			if !r.OK() {
				l.Failed++
				l.FailedByClass[r.ErrClass]++
				continue
			}
			l.OK++
			l.Tokens += r.Tokens
			if d := r.Latency().Seconds(); d > 0 {
				lat = append(lat, d)
				perReq = append(perReq, float64(r.Tokens)/d)
			}
			if d := r.TTFT().Seconds(); d > 0 {
				ttft = append(ttft, d)
			}
			if d := r.TPOT().Seconds(); d > 0 {
				tpot = append(tpot, d)
			}
		}
		tp := measure.LevelThroughput(recs, level, maxSlices)
		if !tp.SamplesOK {
			l.Warnings = append(l.Warnings, fmt.Sprintf("C=%d repeat %d: %s", level, id, tp.Note))
		}
		steadyTok += tp.Tokens
		steadySec += tp.Window.Seconds()
		busy += tp.Concurrency * tp.Window.Seconds()
		sampleSec += tp.SampleSeconds * float64(len(tp.Samples))
		l.Samples = append(l.Samples, tp.Samples...)
		wall, _ := measure.WallWindow(recs)
		wallTok += float64(measure.OKTokens(recs))
		wallSec += wall.Seconds()
	}
	if len(l.FailedByClass) == 0 {
		l.FailedByClass = nil
	}
	if steadySec > 0 {
		l.SteadyThroughput = steadyTok / steadySec
		l.AchievedConcurrency = busy / steadySec
		l.SliceSeconds = sampleSec / float64(max(len(l.Samples), 1))
	}
	if wallSec > 0 {
		l.WallThroughput = wallTok / wallSec
	}
	l.SteadySeconds = steadySec
	l.PerRequest = measure.DistOf(perReq)
	l.Latency = measure.DistOf(lat)
	l.TTFT = measure.DistOf(ttft)
	l.TPOT = measure.DistOf(tpot)
	l.DispatchLagP99 = measure.DistOf(lags).P99
	if len(l.Samples) > 0 {
		s := benchmath.NewSample(slices.Clone(l.Samples), th)
		sum := assumption.Summary(s, conf)
		l.Throughput = Estimate{Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi,
			Confidence: sum.Confidence, N: len(l.Samples)}
		if !finite(sum.Lo) || !finite(sum.Hi) {
			l.Throughput.Lo, l.Throughput.Hi = sum.Center, sum.Center
			l.Warnings = append(l.Warnings, fmt.Sprintf("C=%d: %d throughput sample(s): no confidence interval", level, len(l.Samples)))
		}
		for _, w := range append(s.Warnings, sum.Warnings...) {
			l.Warnings = append(l.Warnings, fmt.Sprintf("C=%d: %v", level, w))
		}
	}
	return l
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
