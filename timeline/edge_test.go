package timeline

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// openingLevel is a generated-token counter scraped every 100 ms over a
// closed-loop level like the disaggregation demo's C=16 on the aggregated
// server: flat before the window (the level's cache flush, nothing
// running), then 16 prompts of 4000 tokens prefilled for the window's first
// 100 ms, one token each, then 13,000 tok/s to the window's end and on (the
// last C−1 requests). The window is 0.87 s from start; the first scrape
// inside it lands phase after it. want is the counter's true increase over
// the window.
func openingLevel(phase float64) (tl *Timeline, start, end int64, want float64) {
	const (
		from    = 10.0 // the window's start, s
		length  = 0.87
		prefill = 0.1
		rate    = 13000.0
	)
	counter := func(t float64) float64 {
		switch {
		case t <= from:
			return 1000
		case t <= from+prefill:
			return 1000 + 16*(t-from)/prefill
		default:
			return 1016 + rate*(t-from-prefill)
		}
	}
	tl = &Timeline{}
	for t := from - 1 + phase; t < from+length+1; t += 0.1 {
		tl.Add(sec(t), []Point{{Series{"sglang:generation_tokens_total", nil, "counter"}, counter(t)}})
	}
	return tl, sec(from), sec(from + length), counter(from+length) - counter(from)
}

// TestGenTokSAtLevelOpening: the server's generation throughput over a
// level's window agrees with the tokens really generated in it, wherever
// the scrapes fall, although the window opens with prefills that generate
// nearly nothing. Read with Increase's extrapolation it runs 0–10% high
// by the phase (+5.5% over them), the bias that doubted the disaggregation
// demo's aggregated baseline at C=16 (the server +6.5% against the
// client's tokens).
func TestGenTokSAtLevelOpening(t *testing.T) {
	var worst, sumExtrapolated float64
	n := 0
	for phase := 0.005; phase < 0.1; phase += 0.01 {
		tl, start, end, want := openingLevel(phase)
		s := Summarize(tl, engine.Lookup(engine.SGLang).Server, start, end)
		if s == nil || s.GenTokS == nil {
			t.Fatalf("phase %.3f: no generation throughput", phase)
		}
		got := s.GenTokS.Value * float64(end-start) / 1e9
		gap := got/want - 1
		worst = max(worst, math.Abs(gap))
		if math.Abs(gap) > 0.01 {
			t.Errorf("phase %.3f s: the server's window counts %.0f tokens, %.0f were generated (%+.1f%%)", phase, got, want, 100*gap)
		}
		ext, _ := Increase(tl.Times, tl.Values[0], start, end)
		sumExtrapolated += ext/want - 1
		n++
	}
	// The case has teeth: the extrapolated reading is biased high here.
	if mean := sumExtrapolated / float64(n); mean < 0.02 {
		t.Errorf("Increase ran %+.1f%% on average: the case no longer shows the extrapolation's bias", 100*mean)
	}
	t.Logf("worst gap read at the edges %.2f%%, extrapolated on average %+.1f%%", 100*worst, 100*sumExtrapolated/float64(n))
}

// TestEdgeIncreaseWithoutScrapesBeyond: an edge with no sample beyond it is
// extrapolated as Increase does, and the other edge still interpolated;
// with none beyond either edge EdgeIncrease is Increase.
func TestEdgeIncreaseWithoutScrapesBeyond(t *testing.T) {
	times := secs(1, 2, 3, 4)
	vals := []float64{10, 20, 30, 40}
	inc, _ := Increase(times, vals, sec(0.5), sec(4.5))
	if e, ok := EdgeIncrease(times, vals, sec(0.5), sec(4.5)); !ok || math.Abs(e-inc) > 1e-9 {
		t.Errorf("no samples beyond either edge: %v %v, want Increase's %v", e, ok, inc)
	}
	// Before: 0 at t=0 (a level's idle start); the start edge at 0.5 is
	// half of 0 → 10, the end edge 4.5 extrapolated half an interval at
	// 10/s.
	times = secs(0, 1, 2, 3, 4)
	vals = []float64{0, 10, 20, 30, 40}
	if e, ok := EdgeIncrease(times, vals, sec(0.5), sec(4.5)); !ok || math.Abs(e-40) > 1e-9 {
		t.Errorf("interpolated start, extrapolated end: %v %v, want 40", e, ok)
	}
	// A NaN sample (a scrape without the series) is skipped: the start is
	// read between 0 and 2.
	vals = []float64{0, math.NaN(), 20, 30, 40}
	if e, ok := EdgeIncrease(times, vals, sec(1.5), sec(4.5)); !ok || math.Abs(e-(5+20+5)) > 1e-9 {
		t.Errorf("NaN before the window: %v %v, want 30", e, ok)
	}
	if _, ok := EdgeIncrease(times, vals, sec(3.5), sec(4.5)); ok {
		t.Error("one sample inside the window has an increase")
	}
}

// TestGenTokSBetweenIdleTimes: a level whose server runs at an even rate
// from the window's start to its end, idle before and after (short prompts,
// one stream), is read exactly wherever the scrapes fall. An even rate
// across the gaps that straddle the edges would give part of each gap's
// tokens to the idle time outside and read low by up to half an interval's.
func TestGenTokSBetweenIdleTimes(t *testing.T) {
	const from, length, rate = 10.0, 1.0, 3000.0
	counter := func(t float64) float64 { return 500 + rate*min(max(t-from, 0), length) }
	for phase := 0.005; phase < 0.1; phase += 0.01 {
		tl := &Timeline{}
		for t := from - 1 + phase; t < from+length+1; t += 0.1 {
			tl.Add(sec(t), []Point{{Series{"sglang:generation_tokens_total", nil, "counter"}, counter(t)}})
		}
		s := Summarize(tl, engine.Lookup(engine.SGLang).Server, sec(from), sec(from+length))
		if s == nil || s.GenTokS == nil {
			t.Fatalf("phase %.3f: no generation throughput", phase)
		}
		if gap := s.GenTokS.Value/rate - 1; math.Abs(gap) > 0.002 {
			t.Errorf("phase %.3f s: %.1f tok/s, generated %.0f (%+.2f%%)", phase, s.GenTokS.Value, rate, 100*gap)
		}
	}
}
