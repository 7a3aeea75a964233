package measure

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// queueRecords simulates an open-loop level against a server of `servers`
// slots, each request holding one for about service seconds (±20%),
// first come first served: n Poisson arrivals at rate per second.
func queueRecords(seed uint64, n, servers int, rate, service float64) []Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	free := make([]float64, servers) // when each slot frees, s
	var recs []Record
	t := 0.0
	for i := range n {
		if i > 0 {
			t += rng.ExpFloat64() / rate
		}
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := max(t, free[k])
		end := start + service*(0.8+0.4*rng.Float64())
		free[k] = end
		ns := func(s float64) int64 { return int64(s * 1e9) }
		recs = append(recs, Record{Level: RateLevel(rate), Rate: rate, Seq: i, SendNs: ns(t) + 1e9,
			FirstNs: ns(start+0.01) + 1e9, EndNs: ns(end) + 1e9, Tokens: 50})
	}
	return recs
}

func TestSaturationOf(t *testing.T) {
	// Capacity: 4 slots / 1 s = 4 requests per second.
	tests := []struct {
		name string
		rate float64
		want bool
	}{
		{"half the capacity", 2, false},
		{"80% of the capacity", 3.2, false},
		{"130% of the capacity", 5.2, true},
		{"twice the capacity", 8, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrong := 0
			const seeds = 40
			for seed := range uint64(seeds) {
				s := SaturationOf(queueRecords(seed, 240, 4, tt.rate, 1))
				if !s.Judged {
					t.Fatal("not judged")
				}
				if s.Saturated != tt.want {
					wrong++
					if wrong == 1 {
						t.Logf("seed %d: %s", seed, s.Reason)
					}
				}
			}
			// A stable queue is called saturated in at most 1 of 40
			// levels; an overloaded one is missed in at most 1 of 40.
			if wrong > 1 {
				t.Errorf("%d of %d levels judged wrongly (want saturated %v)", wrong, seeds, tt.want)
			}
		})
	}
}

func TestSummarizeOpenLoop(t *testing.T) {
	recs := queueRecords(1, 240, 4, 8, 1)
	for i := range recs[:10] {
		recs[i].LateNs = 50e6 // 50 ms late: the client fell behind
	}
	s := Summarize(RateLevel(8), 0, recs)
	if !s.Saturated || s.Saturation == "" || s.Rate != 8 || s.ArrivalRate == 0 || !s.ClientLimited {
		t.Errorf("summary %+v: want saturated, rate 8, an arrival rate and client-limited", s)
	}
	ok := Summarize(RateLevel(2), 0, queueRecords(1, 240, 4, 2, 1))
	if ok.Saturated || ok.ClientLimited || ok.Throughput <= 0 {
		t.Errorf("a level that keeps up: saturated %v, client-limited %v, throughput %v (%v)", ok.Saturated, ok.ClientLimited, ok.Throughput, ok.Warnings)
	}
}

func TestSaturationNotJudgedOnFewRequests(t *testing.T) {
	s := Summarize(RateLevel(8), 0, queueRecords(1, MinSaturationRequests-1, 4, 8, 1))
	if s.Saturated || len(s.Warnings) == 0 || !strings.Contains(strings.Join(s.Warnings, "; "), "saturation not judged") {
		t.Errorf("a level of %d requests: saturated %v, warnings %q", MinSaturationRequests-1, s.Saturated, s.Warnings)
	}
}

func TestRequestsForRate(t *testing.T) {
	if RequestsForRate(0, 0.5) != MinAutoRequests || RequestsForRate(0, 4) != 240 || RequestsForRate(17, 4) != 17 {
		t.Error("RequestsForRate")
	}
}
