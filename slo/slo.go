// Package slo is a service-level objective a campaign serves traffic under:
// bounds on any percentile of time to first token, time per output token,
// inter-token latency and end-to-end latency, and the share of requests that
// must succeed. It says whether one launch's level met the objective and by
// how much (its margin), the level's goodput (requests per second that met
// every bound), and the capacity: the highest load that meets the
// objective, interpolated between the levels of a sweep. The statistics
// across launches are package verdict's; docs/METHOD.md says how every
// figure is made.
package slo

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// DefaultMinSuccess is the share of a level's requests that must succeed
// when the objective does not say: a failed request met no latency bound,
// and a p99 bound already allows one request in a hundred to miss.
const DefaultMinSuccess = 0.99

// SLO is the objective. Durations are seconds.
type SLO struct {
	// Bounds are the latency bounds, keyed as the campaign writes them,
	// METRIC_pN (ParseKey): "ttft_p99", "itl_p95". A bound of 0 is not
	// part of the objective.
	Bounds map[string]float64
	// MinSuccess is the share of requests (0–1) that must succeed;
	// DefaultMinSuccess when 0.
	MinSuccess float64
}

// Keys of the p99 bounds, and of the success share, as the campaign key
// `slo` spells them.
const (
	TTFT       = "ttft_p99"
	TPOT       = "tpot_p99"
	ITL        = "itl_p99"
	E2E        = "e2e_p99"
	MinSuccess = "min_success"
)

// bound is one latency bound of an objective.
type bound struct {
	name   string // its key, "itl_p95"
	metric string
	p      float64 // percentile, 0–100
	limit  float64
}

// perRequest is a request's one value of a metric other than ITL, in
// seconds, false when it has none (no second token for TPOT).
var perRequest = map[string]func(r measure.Record) (float64, bool){
	MetricTTFT: func(r measure.Record) (float64, bool) { return r.TTFT().Seconds(), r.FirstNs != 0 },
	MetricTPOT: func(r measure.Record) (float64, bool) {
		return r.TPOT().Seconds(), r.Tokens >= 2 && r.FirstNs != 0
	},
	MetricE2E: func(r measure.Record) (float64, bool) { return r.Latency().Seconds(), true },
}

// bounds are the objective's bounds in the order it lists them.
func (s SLO) bounds() []bound {
	var out []bound
	for _, k := range sortedKeys(s.Bounds) {
		metric, p, err := ParseKey(k)
		if err != nil || s.Bounds[k] <= 0 {
			continue // the campaign refused it; a zero bound is none
		}
		out = append(out, bound{name: k, metric: metric, p: p, limit: s.Bounds[k]})
	}
	return out
}

// Set reports whether the objective has any bound.
func (s SLO) Set() bool { return len(s.bounds()) > 0 || s.MinSuccess > 0 }

// Success is the share of requests that must succeed.
func (s SLO) Success() float64 {
	if s.MinSuccess > 0 {
		return s.MinSuccess
	}
	return DefaultMinSuccess
}

// String is the objective as the verdict writes it: "ttft_p99 ≤ 2s and
// tpot_p99 ≤ 60ms"; min_success only when it was given.
func (s SLO) String() string {
	var parts []string
	for _, b := range s.bounds() {
		parts = append(parts, b.name+" ≤ "+FormatSeconds(b.limit))
	}
	if s.MinSuccess > 0 {
		parts = append(parts, "success ≥ "+strconv.FormatFloat(100*s.MinSuccess, 'g', 4, 64)+"%")
	}
	return strings.Join(parts, " and ")
}

// FormatSeconds writes a duration in seconds the way a campaign file does:
// "2s", "60ms", "1.5s".
func FormatSeconds(sec float64) string {
	d := time.Duration(math.Round(sec * 1e9))
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64) + "ms"
	}
	return strconv.FormatFloat(float64(d)/1e3, 'f', -1, 64) + "µs"
}

// Result is one launch's level measured against the objective, its repeats
// pooled.
type Result struct {
	// Requests counts the level's measured requests, OK the successful.
	Requests int `json:"requests"`
	OK       int `json:"ok"`
	// Values are each bound's metric at its percentile over the successful
	// requests (ITL: over their gaps), seconds (measure.Percentile), keyed
	// by the bound's key.
	Values map[string]float64 `json:"values_s"`
	// Good counts the requests that met every bound, each by the share of
	// its tokens produced inside the steady-state windows (as the
	// throughput counts tokens, measure.TokensIn); Seconds is the windows'
	// length; Goodput is Good over Seconds, requests per second.
	Good    float64 `json:"good"`
	Seconds float64 `json:"steady_s"`
	Goodput float64 `json:"goodput"`
	// Margins are log(limit/value) for each bound and log(success
	// share/MinSuccess) for MinSuccess, keyed by metric: ≥ 0 where the
	// level meets that part of the objective (−Inf where nothing was
	// measured to show it). Margin is the smallest, Binding its metric.
	Margins Margins `json:"margins"`
	Margin  Margin  `json:"margin"`
	Binding string  `json:"binding"`
	Meets   bool    `json:"meets"`
}

// Evaluate measures one launch's level against the objective: repeats are
// the level's repeats (warm-up left out), windows their steady-state
// windows (the throughput's, measure.LevelThroughput) in the same order.
//
// A bound on ITL pools every gap of the successful requests that lived
// inside the steady state (measure.SteadyITL), and a request meets it when
// its own gaps do at the bound's percentile. A record that keeps no gaps
// (written before they were kept) gives its largest gap instead, as one
// value: stricter, as the bound always was on such records.
func (s SLO) Evaluate(repeats [][]measure.Record, windows []measure.Window) Result {
	bs := s.bounds()
	res := Result{Values: map[string]float64{}, Margins: Margins{}, Margin: Margin(math.Inf(1))}
	values := make([][]float64, len(bs))
	for i, recs := range repeats {
		var w measure.Window
		if i < len(windows) {
			w = windows[i]
		}
		res.Seconds += w.Seconds()
		steady := steadyOf(recs)
		for _, r := range recs {
			res.Requests++
			if !r.OK() {
				continue
			}
			res.OK++
			good := true
			for k, b := range bs {
				xs, own := b.of(r, steady)
				values[k] = append(values[k], xs...)
				if len(xs) > 0 {
					good = good && own <= b.limit
				}
			}
			if good && r.Tokens > 0 {
				// A request counts by the share of its work done inside the
				// window: counting completions would miss the window's first
				// turnover, in which a closed loop completes nothing.
				res.Good += measure.TokensIn([]measure.Record{r}, w) / float64(r.Tokens)
			}
		}
	}
	if res.Seconds > 0 {
		res.Goodput = res.Good / res.Seconds
	}
	margin := func(name string, m float64) {
		if math.IsNaN(m) {
			m = math.Inf(-1)
		}
		res.Margins[name] = m
		if Margin(m) < res.Margin {
			res.Margin, res.Binding = Margin(m), name
		}
	}
	for k, b := range bs {
		if len(values[k]) == 0 {
			// Nothing measured cannot show the bound is met.
			margin(b.name, math.Inf(-1))
			continue
		}
		p := measure.Percentile(values[k], b.p)
		res.Values[b.name] = p
		margin(b.name, math.Log(b.limit/p))
	}
	share := 0.0
	if res.Requests > 0 {
		share = float64(res.OK) / float64(res.Requests)
	}
	margin(MinSuccess, math.Log(share/s.Success()))
	res.Meets = res.Margin >= 0
	return res
}

// of are r's values of b's metric (seconds) and the one r is judged by
// against b: none when r has no value (no second token for TPOT, a
// request outside the steady state for ITL).
func (b bound) of(r measure.Record, steady func(measure.Record) bool) (xs []float64, own float64) {
	if b.metric != MetricITL {
		x, ok := perRequest[b.metric](r)
		if !ok {
			return nil, 0
		}
		return []float64{x}, x
	}
	if len(r.ITL) == 0 {
		if r.MaxITLNs <= 0 {
			return nil, 0
		}
		x := float64(r.MaxITLNs) / 1e9
		return []float64{x}, x
	}
	if !steady(r) {
		return nil, 0
	}
	xs = r.ITL.Seconds()
	return xs, measure.Percentile(xs, b.p)
}

// steadyOf says which of one repeat's requests lived inside its steady
// state, as measure.SteadyITL decides: every request when it has none.
func steadyOf(recs []measure.Record) func(measure.Record) bool {
	if len(recs) == 0 {
		return func(measure.Record) bool { return true }
	}
	start, end, ok := measure.SteadyWindow(recs[0].Level, recs)
	if !ok {
		return func(measure.Record) bool { return true }
	}
	w := measure.Window{Start: start, End: end}
	return func(r measure.Record) bool { return measure.InSteadyState(r, w) }
}
