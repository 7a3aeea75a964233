package timeline

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// TestSummarize summarises a hand-made SGLang timeline over a window: two
// ranks' running gauges summed, a counter that resets, the accept length from
// two counters, and the window's own histogram.
func TestSummarize(t *testing.T) {
	var tl Timeline
	r0 := map[string]string{"rank": "0"}
	r1 := map[string]string{"rank": "1"}
	for k := range 6 {
		gen := float64(100 * k)
		if k >= 3 {
			gen = float64(100 * (k - 3)) // restarted at the 4th scrape
		}
		tl.Add(sec(float64(k)), []Point{
			{Series{"sglang:num_running_reqs", r0, "gauge"}, float64(k)},
			{Series{"sglang:num_running_reqs", r1, "gauge"}, 2},
			{Series{"sglang:token_usage", r0, "gauge"}, 0.2},
			{Series{"sglang:token_usage", r1, "gauge"}, 0.4},
			{Series{"sglang:generation_tokens_total", nil, "counter"}, gen},
			{Series{"sglang:spec_verify_calls_total", nil, "counter"}, gen / 2},
			{Series{"sglang:time_to_first_token_seconds_bucket", map[string]string{"le": "0.1"}, "histogram"}, float64(10 + k)},
			{Series{"sglang:time_to_first_token_seconds_bucket", map[string]string{"le": "+Inf"}, "histogram"}, float64(10 + 2*k)},
		})
	}
	// Window (0.5, 4.5]: scrapes 1–4.
	s := Summarize(&tl, engine.Lookup(engine.SGLang).Server, sec(0.5), sec(4.5))
	if s == nil {
		t.Fatal("no summary")
	}
	if s.Scrapes != 4 {
		t.Errorf("scrapes %d, want 4", s.Scrapes)
	}
	// Running: 3, 4, 5, 6 (rank 0's k + rank 1's 2).
	if g := s.Running; g == nil || g.Mean != 4.5 || g.P50 != 4.5 || g.Max != 6 {
		t.Errorf("running %+v, want mean 4.5, p50 4.5, max 6", g)
	}
	if g := s.KVUsage; g == nil || math.Abs(g.Mean-0.3) > 1e-12 {
		t.Errorf("kv usage %+v, want 0.3 (ranks averaged)", g)
	}
	// Generation: 100, 200, 0, 100 → 100 − 100 + 200 = 200 raw over 3 s,
	// and read at the edges from the scrapes at 0 and 5 (EdgeIncrease):
	// half of 0 → 100 at the start, half of 100 → 200 at the end; 300 over
	// the 4 s window, 75 tok/s.
	if f := s.GenTokS; f == nil || math.Abs(f.Value-75) > 1e-9 {
		t.Errorf("gen tok/s %+v, want 75", f)
	}
	if f := s.AcceptLength; f == nil || math.Abs(f.Value-2) > 1e-9 {
		t.Errorf("accept length %+v, want 2 (generated tokens per verify call)", f)
	}
	// TTFT in the window: 3 new observations, all ≤ 0.1 … and 3 above:
	// buckets +Inf 6, 0.1 3 → the median is the highest finite bound's share.
	if h := s.TTFT; h == nil || h.Count != 6 || math.Abs(h.P50-0.1) > 1e-12 || h.P99 != 0.1 {
		t.Errorf("ttft %+v, want 6 observations, p50 0.1, p99 0.1", h)
	}
	if s.Queued != nil || s.Preemptions != nil {
		t.Errorf("queued %+v, preemptions %+v: want none (no such series)", s.Queued, s.Preemptions)
	}
	if Summarize(&tl, engine.Lookup(engine.SGLang).Server, sec(3.5), sec(4.5)) != nil {
		t.Error("a window with one scrape has a summary")
	}
}
