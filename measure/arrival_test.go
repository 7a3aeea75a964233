package measure

import (
	"math"
	"testing"
)

func TestArrivalRecorder(t *testing.T) {
	tests := []struct {
		name   string
		chunks int
		units  func(i int) int   // content of chunk i
		at     func(i int) int64 // its arrival, ns
		want   []int64           // marks after the first chunk, ns
		slack  int64
	}{
		{"steady, one unit a chunk", 801, func(int) int { return 1 }, func(i int) int64 { return int64(i) * 10 },
			[]int64{1000, 2000, 3000, 4000, 5000, 6000, 7000}, 10 * 801 / arrivalPoints},
		{"many chunks: memory stays bounded", 100_001, func(int) int { return 1 }, func(i int) int64 { return int64(i) },
			[]int64{12_500, 25_000, 37_500, 50_000, 62_500, 75_000, 87_500}, 100_001 * 2 / arrivalPoints},
		{"first half fast, second half slow", 800, func(int) int { return 1 }, func(i int) int64 {
			if i < 400 {
				return int64(i)
			}
			return 400 + int64(i-400)*9
		}, []int64{100, 200, 300, 400, 1300, 2200, 3100}, 9 * 800 / arrivalPoints},
		{"one big chunk, then a trickle", 101, func(i int) int {
			if i == 0 {
				return 700
			}
			return 1
		}, func(i int) int64 { return int64(i) * 10 }, []int64{0, 0, 0, 0, 0, 0, 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a ArrivalRecorder
			first := int64(1_000_000)
			for i := range tt.chunks {
				a.Add(tt.units(i), first+tt.at(i))
			}
			got := a.Times(first)
			if len(got) != len(tt.want) {
				t.Fatalf("marks %v, want %v", got, tt.want)
			}
			for k := range got {
				if d := got[k] - tt.want[k]; d < -tt.slack || d > tt.slack {
					t.Errorf("mark %d/8 at %d ns, want %d ±%d (all: %v)", k+1, got[k], tt.want[k], tt.slack, got)
				}
			}
		})
	}
	var one ArrivalRecorder
	one.Add(5, 100)
	if got := one.Times(100); got != nil {
		t.Errorf("one chunk: marks %v, want none", got)
	}
}

func TestTokensInFollowsArrival(t *testing.T) {
	// 81 tokens over 800 ns after the first: the first eighth of the rest
	// (10) by 700 ns, the other seven eighths in the last 100 ns.
	late := Record{SendNs: 0, FirstNs: 1, EndNs: 801, Tokens: 81, Status: 200,
		ArrivalNs: []int64{700, 710, 720, 730, 740, 750, 760}}
	even := late
	even.ArrivalNs = nil
	for _, tc := range []struct {
		name string
		r    Record
		w    Window
		want float64
	}{
		{"late arrival: the first 700 ns hold the first token and one eighth", late, Window{0, 701}, 1 + 10},
		{"late arrival: the last 100 ns hold seven eighths", late, Window{701, 1000}, 70},
		{"late arrival: one eighth's span", late, Window{711, 721}, 10},
		{"late arrival: half of the first eighth's span", late, Window{1, 351}, 1 + 5},
		{"no marks: even spread", even, Window{0, 401}, 1 + 40},
		{"no marks: even spread of a quarter", even, Window{201, 401}, 20},
	} {
		if got := tokensIn(tc.r, tc.w); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v tokens, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkArrivalRecorder is the client's added cost per streamed chunk.
func BenchmarkArrivalRecorder(b *testing.B) {
	var a ArrivalRecorder
	for i := range b.N {
		if i%2000 == 0 {
			a = ArrivalRecorder{} // a new stream of 2000 chunks
		}
		a.Add(4, int64(i))
	}
}
