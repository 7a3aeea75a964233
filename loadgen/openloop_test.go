package loadgen

import (
	"context"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

func TestArrivalsSameSeedSameSchedule(t *testing.T) {
	const n, rate = 500, 4.0
	for _, b := range []float64{1, 0.3, 5} {
		a := Arrivals(n, rate, b, 7, measure.RateLevel(rate), 0)
		if !slices.Equal(a, Arrivals(n, rate, b, 7, measure.RateLevel(rate), 0)) {
			t.Fatalf("burstiness %g: the same seed gave two schedules", b)
		}
		if slices.Equal(a, Arrivals(n, rate, b, 8, measure.RateLevel(rate), 0)) {
			t.Errorf("burstiness %g: seeds 7 and 8 gave the same schedule", b)
		}
		if slices.Equal(a, Arrivals(n, rate, b, 7, measure.RateLevel(rate), 1)) {
			t.Errorf("burstiness %g: repeats 0 and 1 gave the same schedule", b)
		}
		if a[0] != 0 || !slices.IsSorted(a) {
			t.Errorf("burstiness %g: the schedule does not start at 0 and rise", b)
		}
		// The n−1 gaps span exactly (n−1)/rate: the level's mean rate is the target.
		if want := time.Duration(float64(n-1) / rate * 1e9); (a[n-1] - want).Abs() > time.Microsecond {
			t.Errorf("burstiness %g: last arrival at %v, want %v", b, a[n-1], want)
		}
	}
}

// TestArrivalsShape checks the gaps' coefficient of variation, 1/√burstiness
// for Gamma(burstiness, ·) gaps: 1 for Poisson arrivals, more for bursts,
// less for even arrivals. A draw that ignored the shape fails all but one.
func TestArrivalsShape(t *testing.T) {
	const n = 40000
	for _, b := range []float64{0.25, 0.5, 1, 2, 8} {
		a := Arrivals(n, 10, b, 1, measure.RateLevel(10), 0)
		var sum, sq float64
		for i := 1; i < n; i++ {
			g := (a[i] - a[i-1]).Seconds()
			sum += g
			sq += g * g
		}
		m := sum / (n - 1)
		cv := math.Sqrt(sq/(n-1)-m*m) / m
		if want := 1 / math.Sqrt(b); math.Abs(cv-want) > 0.05*want {
			t.Errorf("burstiness %g: gaps' coefficient of variation %.3f, want %.3f", b, cv, want)
		}
	}
}

// TestOpenLoopKeepsTheRate sends a Poisson schedule to a fast local server
// and checks, from the recorded send times, that the requests went out at
// the target rate (the schedule spans (n−1)/rate exactly, so a client that
// keeps up measures the target), that every record says how late it was
// sent, that nothing capped the requests in flight, and that a server that
// keeps up is not called saturated.
func TestOpenLoopKeepsTheRate(t *testing.T) {
	const rate, n = 100.0, 400
	var in, peak atomic.Int64
	srv := newServer(t, script{chunks: 4, ttft: 150 * time.Millisecond, gap: 5 * time.Millisecond, inFlight: &in, maxInFlight: &peak})
	rf, got := collect()
	res, err := Run(context.Background(), Options{URL: srv.URL, Rates: []float64{rate}, Requests: n, Seed: 3,
		Prompts: testPrompts(t), Records: rf})
	if err != nil {
		t.Fatal(err)
	}
	recs := got()
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	key := measure.RateLevel(rate)
	for _, r := range recs {
		if r.Level != key || r.Rate != rate || !r.OK() || r.LateNs < 0 || r.Capped {
			t.Fatalf("record %+v: want level %s, rate %g, success, a lateness, not capped", r, key, rate)
		}
	}
	got2 := measure.ArrivalRateOf(recs)
	t.Logf("%d requests at %.0f/s: measured %.3f/s from the send times, late p99 %.1f ms, at most %d in flight",
		n, rate, got2, res.Levels[0].LateP99*1e3, peak.Load())
	if math.Abs(got2-rate) > 0.02*rate {
		t.Errorf("measured arrival rate %.2f/s, want %.0f/s ±2%%", got2, rate)
	}
	// At 100/s and 150 ms each, about 15 are in flight: far more than
	// any closed loop of a few slots would show, and no cap was met.
	if p := peak.Load(); p < 8 {
		t.Errorf("the server saw at most %d requests at once: the loop is not open", p)
	}
	s := res.Levels[0]
	if s.Level != key || s.Rate != rate || s.Saturated || s.Capped != 0 {
		t.Errorf("summary: level %s rate %g saturated %v capped %d", s.Level, s.Rate, s.Saturated, s.Capped)
	}
	if math.Abs(s.ArrivalRate-got2) > 1e-9 {
		t.Errorf("summary arrival rate %.3f, records say %.3f", s.ArrivalRate, got2)
	}
}

// TestOpenLoopSameScheduleForEveryVariant runs the same rate sweep twice
// against servers of different speed: the requests are due at the same
// offsets (send time less lateness, from the level's first due time) with
// the same prompts.
func TestOpenLoopSameScheduleForEveryVariant(t *testing.T) {
	due := func(gap time.Duration) []int64 {
		srv := newServer(t, script{chunks: 3, gap: gap})
		rf, got := collect()
		if _, err := Run(context.Background(), Options{URL: srv.URL, Rates: []float64{50}, Requests: 40, Seed: 9,
			Prompts: testPrompts(t), Records: rf}); err != nil {
			t.Fatal(err)
		}
		recs := got()
		slices.SortFunc(recs, func(a, b measure.Record) int { return a.Seq - b.Seq })
		var out []int64
		for _, r := range recs {
			out = append(out, r.SendNs-r.LateNs-(recs[0].SendNs-recs[0].LateNs), int64(r.Prompt))
		}
		return out
	}
	a, b := due(time.Millisecond), due(30*time.Millisecond)
	if !slices.Equal(a, b) {
		t.Errorf("two servers got different schedules or prompts:\n%v\n%v", a, b)
	}
}

// TestOpenLoopCap: with a cap of 3 in flight and a server that holds each
// request far longer than the gap between arrivals, requests wait for the
// cap, are recorded as capped, and the level is flagged client-limited.
func TestOpenLoopCap(t *testing.T) {
	var in, peak atomic.Int64
	srv := newServer(t, script{chunks: 2, ttft: 100 * time.Millisecond, inFlight: &in, maxInFlight: &peak})
	rf, got := collect()
	res, err := Run(context.Background(), Options{URL: srv.URL, Rates: []float64{200}, Requests: 20, MaxInFlight: 3,
		Prompts: testPrompts(t), Records: rf})
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > 3 {
		t.Errorf("%d in flight at once past a cap of 3", p)
	}
	capped := 0
	for _, r := range got() {
		if r.Capped {
			capped++
		}
	}
	s := res.Levels[0]
	if capped == 0 || s.Capped != capped || !s.ClientLimited {
		t.Errorf("%d capped records, summary %d, client-limited %v", capped, s.Capped, s.ClientLimited)
	}
}

func TestOptionsWantOneKindOfLevel(t *testing.T) {
	for _, o := range []Options{
		{URL: "http://x", Prompts: testPrompts(t)},
		{URL: "http://x", Prompts: testPrompts(t), Concurrency: []int{1}, Rates: []float64{1}},
		{URL: "http://x", Prompts: testPrompts(t), Rates: []float64{0}},
		{URL: "http://x", Prompts: testPrompts(t), Rates: []float64{1}, Burstiness: -1},
	} {
		if err := o.check(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
