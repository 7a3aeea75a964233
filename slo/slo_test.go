package slo

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
)

func TestCapacity(t *testing.T) {
	m := func(x float64) map[string]float64 { return map[string]float64{TTFT: x, MinSuccess: 0.01} }
	for _, tc := range []struct {
		name    string
		points  []Point
		want    float64
		bound   Bound
		binding string
	}{
		{"between two levels, halfway in log-load", []Point{{10, m(0.5)}, {40, m(-0.5)}}, 20, Exact, TTFT},
		{"a quarter of the way", []Point{{1, m(0.25)}, {16, m(-0.75)}}, 2, Exact, TTFT},
		{"exactly at the limit passes", []Point{{5, m(0)}, {10, m(-1)}}, 5, Exact, TTFT},
		{"unsorted input", []Point{{40, m(-0.5)}, {10, m(0.5)}, {1, m(2)}}, 20, Exact, TTFT},
		{"every level meets it", []Point{{1, m(2)}, {250, m(0.1)}}, 250, Above, ""},
		{"the lowest misses it", []Point{{1, m(-0.1)}, {2, m(-1)}}, 1, Below, TTFT},
		{"a level that meets it again does not count", []Point{{1, m(1)}, {2, m(-1)}, {4, m(1)}}, math.Sqrt2, Exact, TTFT},
		{"nothing measured at the miss", []Point{{4, m(1)}, {8, m(math.Inf(-1))}}, 4, Exact, TTFT},
		{"the metric that crosses first binds",
			[]Point{{10, map[string]float64{TTFT: 0.9, TPOT: 0.1}}, {100, map[string]float64{TTFT: -0.1, TPOT: -0.9}}},
			math.Pow(10, 1.1), Exact, TPOT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, b, binding, ok := Capacity(tc.points)
			if !ok || math.Abs(got-tc.want) > 1e-9*tc.want || b != tc.bound || binding != tc.binding {
				t.Errorf("Capacity = %v, %q, %q, %v; want %v, %q, %q", got, b, binding, ok, tc.want, tc.bound, tc.binding)
			}
		})
	}
	if _, _, _, ok := Capacity(nil); ok {
		t.Error("Capacity(nil) ok")
	}
}

// rec is a successful request sent at 0 with the given TTFT and TPOT (s)
// and 11 tokens.
func rec(ttft, tpot float64) measure.Record {
	first := int64(ttft * 1e9)
	return measure.Record{SendNs: 0, FirstNs: first, EndNs: first + int64(10*tpot*1e9), Tokens: 11,
		MaxITLNs: int64(2 * tpot * 1e9)}
}

func TestEvaluate(t *testing.T) {
	var recs []measure.Record
	for i := range 100 {
		recs = append(recs, rec(0.1+0.01*float64(i), 0.02))
	}
	w := []measure.Window{{Start: 0, End: 10e9}}
	o := SLO{Bounds: map[string]float64{TTFT: 1, TPOT: 0.05}}
	r := o.Evaluate([][]measure.Record{recs}, w)
	if p := r.Values[TTFT]; math.Abs(p-measure.Percentile(ttfts(recs), 99)) > 1e-12 {
		t.Errorf("ttft p99 %v", p)
	}
	// TTFTs run 0.10…1.09 s: p99 is 1.0801 > 1 s, so the level misses;
	// the requests with TTFT ≤ 1 s (91 of them) were good, each wholly
	// inside the 10 s window.
	if r.Meets || r.Binding != TTFT || math.Abs(r.Good-91) > 1e-9 || math.Abs(r.Goodput-9.1) > 1e-9 {
		t.Errorf("meets %v binding %q good %v goodput %v", r.Meets, r.Binding, r.Good, r.Goodput)
	}
	if want := math.Log(1 / 1.0801); math.Abs(r.Margins[TTFT]-want) > 1e-9 {
		t.Errorf("ttft margin %v, want %v", r.Margins[TTFT], want)
	}
	// Failures count against min_success only.
	recs[0].ErrClass, recs[1].ErrClass = measure.ErrTimeout, measure.ErrTimeout
	r = SLO{Bounds: map[string]float64{TTFT: 2}}.Evaluate([][]measure.Record{recs}, w)
	if r.Meets || r.Binding != MinSuccess || r.OK != 98 {
		t.Errorf("two failures of 100 under the default min_success: meets %v binding %q ok %d", r.Meets, r.Binding, r.OK)
	}
	r = SLO{Bounds: map[string]float64{TTFT: 2}, MinSuccess: 0.98}.Evaluate([][]measure.Record{recs}, w)
	if !r.Meets {
		t.Errorf("two failures of 100 under min_success 0.98: %+v", r)
	}
	// A request half inside the window counts half.
	r = SLO{Bounds: map[string]float64{E2E: 10}}.Evaluate([][]measure.Record{{{FirstNs: 1e9, EndNs: 3e9, Tokens: 3}}}, []measure.Window{{Start: 0, End: 2e9}})
	if math.Abs(r.Good-2.0/3) > 1e-9 {
		t.Errorf("good %v, want 2/3 (one token at 1 s, the other two spread over 1-3 s)", r.Good)
	}
	// An ITL bound with no gap recorded cannot be shown to be met.
	r = SLO{Bounds: map[string]float64{ITL: 1}}.Evaluate([][]measure.Record{{{FirstNs: 1, EndNs: 2, Tokens: 1}}}, w)
	if r.Meets || !math.IsInf(r.Margins[ITL], -1) {
		t.Errorf("no ITL recorded: %+v", r)
	}
}

func ttfts(recs []measure.Record) []float64 {
	var out []float64
	for _, r := range recs {
		out = append(out, r.TTFT().Seconds())
	}
	return out
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		s    SLO
		want string
	}{
		{SLO{Bounds: map[string]float64{TTFT: 2, TPOT: 0.06}}, "ttft_p99 ≤ 2s and tpot_p99 ≤ 60ms"},
		{SLO{Bounds: map[string]float64{E2E: 1.5, ITL: 0.0005}, MinSuccess: 0.995}, "itl_p99 ≤ 500µs and e2e_p99 ≤ 1.5s and success ≥ 99.5%"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}
