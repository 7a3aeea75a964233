// Package slo is a service-level objective a campaign serves traffic under:
// bounds on the p99 of time to first token, time per output token,
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

// SLO is the objective. A zero bound is not part of it. Durations are
// seconds.
type SLO struct {
	TTFTP99 float64 `json:"ttft_p99_s,omitempty"`
	TPOTP99 float64 `json:"tpot_p99_s,omitempty"`
	ITLP99  float64 `json:"itl_p99_s,omitempty"`
	E2EP99  float64 `json:"e2e_p99_s,omitempty"`
	// MinSuccess is the share of requests (0–1) that must succeed;
	// DefaultMinSuccess when 0.
	MinSuccess float64 `json:"min_success,omitempty"`
}

// Metric names, as the campaign key `slo` spells them.
const (
	TTFT       = "ttft_p99"
	TPOT       = "tpot_p99"
	ITL        = "itl_p99"
	E2E        = "e2e_p99"
	MinSuccess = "min_success"
)

// bound is one latency bound of an objective and how a record is measured
// against it.
type bound struct {
	name  string
	limit float64
	// of is the record's value in seconds, false when the record has none
	// (no second token for TPOT, no gap for ITL).
	of func(r measure.Record) (float64, bool)
}

func (s SLO) bounds() []bound {
	all := []bound{
		{TTFT, s.TTFTP99, func(r measure.Record) (float64, bool) {
			return r.TTFT().Seconds(), r.FirstNs != 0
		}},
		{TPOT, s.TPOTP99, func(r measure.Record) (float64, bool) {
			return r.TPOT().Seconds(), r.Tokens >= 2 && r.FirstNs != 0
		}},
		// The records keep each request's largest gap between chunks per
		// token, not every gap: the bound applies to that largest gap,
		// stricter than a p99 over all gaps.
		{ITL, s.ITLP99, func(r measure.Record) (float64, bool) {
			return float64(r.MaxITLNs) / 1e9, r.MaxITLNs > 0
		}},
		{E2E, s.E2EP99, func(r measure.Record) (float64, bool) {
			return r.Latency().Seconds(), true
		}},
	}
	out := all[:0]
	for _, b := range all {
		if b.limit > 0 {
			out = append(out, b)
		}
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
	// P99 is each bounded metric's p99 over the successful requests, in
	// seconds (measure.Percentile), keyed by metric name.
	P99 map[string]float64 `json:"p99_s"`
	// Good counts the requests that met every bound, each by the share of
	// its tokens produced inside the steady-state windows (as the
	// throughput counts tokens, measure.TokensIn); Seconds is the windows'
	// length; Goodput is Good over Seconds, requests per second.
	Good    float64 `json:"good"`
	Seconds float64 `json:"steady_s"`
	Goodput float64 `json:"goodput"`
	// Margins are log(limit/p99) for each bound and log(success
	// share/MinSuccess) for MinSuccess, keyed by metric: ≥ 0 where the
	// level meets that part of the objective (−Inf where nothing was
	// measured to show it). Margin is the smallest, Binding its metric.
	Margins map[string]float64 `json:"margins"`
	Margin  float64            `json:"margin"`
	Binding string             `json:"binding"`
	Meets   bool               `json:"meets"`
}

// Evaluate measures one launch's level against the objective: repeats are
// the level's repeats (warm-up left out), windows their steady-state
// windows (the throughput's, measure.LevelThroughput) in the same order.
func (s SLO) Evaluate(repeats [][]measure.Record, windows []measure.Window) Result {
	bs := s.bounds()
	res := Result{P99: map[string]float64{}, Margins: map[string]float64{}, Margin: math.Inf(1)}
	values := make([][]float64, len(bs))
	for i, recs := range repeats {
		var w measure.Window
		if i < len(windows) {
			w = windows[i]
		}
		res.Seconds += w.Seconds()
		for _, r := range recs {
			res.Requests++
			if !r.OK() {
				continue
			}
			res.OK++
			good := true
			for k, b := range bs {
				if x, ok := b.of(r); ok {
					values[k] = append(values[k], x)
					good = good && x <= b.limit
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
		if m < res.Margin {
			res.Margin, res.Binding = m, name
		}
	}
	for k, b := range bs {
		if len(values[k]) == 0 {
			// Nothing measured cannot show the bound is met.
			margin(b.name, math.Inf(-1))
			continue
		}
		p := measure.Percentile(values[k], 99)
		res.P99[b.name] = p
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
