package measure

import (
	"reflect"
	"strings"
	"testing"
)

// closedLoop builds the records of an ideal closed loop: c slots, n
// requests of tokens each, every request taking lat ns, all in lockstep.
func closedLoop(level, c, n, tokens int, lat int64) []Record {
	var out []Record
	for i := range n {
		wave := int64(i / c)
		send := 1_000_000_000 + wave*lat
		out = append(out, Record{Level: ConcurrencyLevel(level), Seq: i, Prompt: i % 7, SendNs: send,
			FirstNs: send + lat/10, EndNs: send + lat, Tokens: tokens, Status: 200, OutputHash: "h"})
	}
	return out
}

const testMaxSamples = 10

func TestLevelThroughputSamples(t *testing.T) {
	for _, tc := range []struct {
		name        string
		c, n        int
		wantSamples int
		wantOK      bool
	}{
		{"single stream, 30 requests: capped at 10 samples", 1, 30, 10, true},
		{"C=2, 30 requests: 15 latencies long, capped at 10", 2, 30, 10, true},
		{"C=70, auto 280: four latencies, four samples", 70, 280, 4, true},
		{"C=250 with the seeds' 30 requests: no steady state", 250, 30, 1, false},
		{"C=10, 18 requests: one latency of full load, one sample", 10, 18, 1, true},
		{"C=10, 10 requests: one wave, one sample", 10, 10, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const lat = int64(2e9)
			recs := closedLoop(tc.c, tc.c, tc.n, 200, lat)
			tp := LevelThroughput(recs, ConcurrencyLevel(tc.c), testMaxSamples)
			s := tp.Samples
			if tp.SamplesOK != tc.wantOK || len(s) != tc.wantSamples {
				t.Fatalf("%d samples (ok=%v), want %d (ok=%v)", len(s), tp.SamplesOK, tc.wantSamples, tc.wantOK)
			}
			if tp.SamplesOK == (tp.Note != "") {
				t.Errorf("samples ok %v with note %q", tp.SamplesOK, tp.Note)
			}
			if !near(mean(s), tp.TokS) {
				t.Errorf("mean of samples %.4f, steady %.4f: equal sub-windows must average to the whole", mean(s), tp.TokS)
			}
			if !tp.Steady {
				return
			}
			// Whole waves of the ideal loop in the window: exactly C requests'
			// tokens per latency.
			want := float64(tc.c*200) / (float64(lat) / 1e9)
			if !near(tp.TokS, want) {
				t.Errorf("steady %.2f tok/s, want %.2f", tp.TokS, want)
			}
		})
	}
}

func TestLevelThroughputShortSteadyState(t *testing.T) {
	// C=2: the second request is sent halfway through the first, which ends
	// before the second: full load for 50 ms against 100 ms latencies.
	tp := LevelThroughput([]Record{rec(0, 0, 10, 100, 10), rec(1, 50, 60, 150, 10)}, ConcurrencyLevel(2), testMaxSamples)
	if !tp.Steady || tp.SamplesOK || len(tp.Samples) != 1 || !strings.Contains(tp.Note, "shorter than one median request latency") {
		t.Errorf("steady %v, samples ok %v, %d samples, note %q", tp.Steady, tp.SamplesOK, len(tp.Samples), tp.Note)
	}
	if tp.Window != (Window{50 * ms, 100 * ms}) {
		t.Errorf("window %+v", tp.Window)
	}
}

func TestDistOf(t *testing.T) {
	d := DistOf([]float64{5, 1, 4, 2, 3})
	if d.N != 5 || d.Mean != 3 || d.P50 != 3 || d.Min != 1 || d.Max != 5 || !near(d.P99, 4.96) || !near(d.P90, 4.6) {
		t.Errorf("DistOf = %+v", d)
	}
	if !reflect.DeepEqual(DistOf(nil), Dist{}) {
		t.Error("DistOf(nil) not zero")
	}
}

func TestRequestsFor(t *testing.T) {
	for _, tc := range []struct{ requests, c, want int }{
		{0, 1, 30}, {0, 7, 30}, {0, 8, 32}, {0, 250, 1000}, {12, 250, 12}, {40, 1, 40},
	} {
		if got := RequestsFor(tc.requests, tc.c); got != tc.want {
			t.Errorf("RequestsFor(%d, %d) = %d, want %d", tc.requests, tc.c, got, tc.want)
		}
	}
	if AutoRule != "max(30, 4×C)" {
		t.Errorf("AutoRule = %q", AutoRule)
	}
}
