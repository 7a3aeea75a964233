package slo

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// gapped is a closed loop of 2 slots and 10 requests, each with five gaps
// around base seconds apart (its own jitter), the first wave's (the
// ramp-up's) far shorter.
func gapped(base float64) []measure.Record {
	var recs []measure.Record
	for i := range 10 {
		send := int64(i/2) * 1e9
		gap := int64(base*1e6) + int64(100*i)
		if i < 2 {
			gap = 10
		}
		recs = append(recs, measure.Record{Level: measure.ConcurrencyLevel(2), Seq: i, SendNs: send, FirstNs: send + 1e8,
			EndNs: send + 1e9, Tokens: 6, Chunks: 6, ITL: measure.Gaps{gap, gap + 50, gap - 40, gap + 900, gap}})
	}
	return recs
}

// TestEvaluateAnyPercentile: a bound on ITL at p95 is judged on
// Percentile's p95 over every steady-state gap of the level, and one on
// TTFT at p90 on the TTFTs' p90; each margin is log(limit/value).
func TestEvaluateAnyPercentile(t *testing.T) {
	recs := gapped(0.02)
	w := []measure.Window{{Start: 0, End: 5e9}}
	o := SLO{Bounds: map[string]float64{"itl_p95": 0.025, "ttft_p90": 0.2}}
	r := o.Evaluate([][]measure.Record{recs}, w)
	gaps := measure.SteadyITL(measure.ConcurrencyLevel(2), recs)
	if len(gaps) != 8*5 {
		t.Fatalf("%d steady gaps, want the last eight requests' 40", len(gaps))
	}
	want := measure.Percentile(gaps, 95)
	if got := r.Values["itl_p95"]; math.Abs(got-want) > 1e-15 {
		t.Errorf("itl_p95 = %g, want %g", got, want)
	}
	if got := r.Margins["itl_p95"]; math.Abs(got-math.Log(0.025/want)) > 1e-12 {
		t.Errorf("itl_p95 margin %g", got)
	}
	if got, want := r.Values["ttft_p90"], measure.Percentile(ttfts(recs), 90); math.Abs(got-want) > 1e-12 {
		t.Errorf("ttft_p90 = %g, want %g", got, want)
	}
	if !r.Meets {
		t.Errorf("the level misses %s: %+v", o, r)
	}
	if r = (SLO{Bounds: map[string]float64{"itl_p95": 0.0205}}).Evaluate([][]measure.Record{recs}, w); r.Meets || r.Binding != "itl_p95" {
		t.Errorf("a bound under the p95 met: %+v", r)
	}
}

// TestEvaluateITLWithoutGaps: records written before the gaps were kept are
// judged by their largest gap, as before.
func TestEvaluateITLWithoutGaps(t *testing.T) {
	recs := gapped(0.02)
	for i := range recs {
		recs[i].ITL, recs[i].MaxITLNs = nil, int64(30e6+i)
	}
	r := SLO{Bounds: map[string]float64{ITL: 0.05}}.Evaluate([][]measure.Record{recs}, []measure.Window{{Start: 0, End: 5e9}})
	if want := 30e-3 + 8.91e-9; math.Abs(r.Values[ITL]-want) > 1e-12 || !r.Meets {
		t.Errorf("itl_p99 of the largest gaps %g, want %g", r.Values[ITL], want)
	}
}

// TestSLOJSON: the objective reads back as it was written, a manifest
// written when only p99 bounds existed reads as before, and a key that is
// no bound is an error.
func TestSLOJSON(t *testing.T) {
	o := SLO{Bounds: map[string]float64{"itl_p95": 0.02, TTFT: 2, "ttft_p90": 1}, MinSuccess: 0.995}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"ttft_p90_s":1,"ttft_p99_s":2,"itl_p95_s":0.02,"min_success":0.995}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back SLO
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, o) {
		t.Errorf("read back %+v, %v", back, err)
	}
	var old SLO
	if err := json.Unmarshal([]byte(`{"ttft_p99_s":2,"tpot_p99_s":0.06}`), &old); err != nil ||
		!reflect.DeepEqual(old, SLO{Bounds: map[string]float64{TTFT: 2, TPOT: 0.06}}) {
		t.Errorf("an old manifest's objective read as %+v, %v", old, err)
	}
	for _, bad := range []string{`{"ttft_p100_s":1}`, `{"speed":1}`, `{"ttft_p99":1}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s read without error", bad)
		}
	}
	if got := (SLO{Bounds: map[string]float64{"itl_p95": 0.0005, "tpot_p99.9": 0.06}}).String(); got != "tpot_p99.9 ≤ 60ms and itl_p95 ≤ 500µs" {
		t.Errorf("String() = %q", got)
	}
}
