package measure

import "testing"

// closedLoop builds the records of an ideal closed loop: c slots, n
// requests of tokens each, every request taking lat ns, all in lockstep.
func closedLoop(level, c, n, tokens int, lat int64) []Record {
	var out []Record
	for i := range n {
		wave := int64(i / c)
		send := 1_000_000_000 + wave*lat
		out = append(out, Record{Level: level, Seq: i, Prompt: i % 7, SendNs: send,
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
		{"C=2, 30 requests: groups of 4", 2, 30, 7, true},
		{"C=70, auto 280: three turnovers", 70, 280, 3, true},
		{"C=250 with the seeds' 30 requests: no steady state", 250, 30, 1, false},
		{"C=10, 19 requests: not one whole turnover", 10, 18, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const lat = int64(2e9)
			recs := closedLoop(tc.c, tc.c, tc.n, 200, lat)
			tp := LevelThroughput(recs, tc.c, testMaxSamples)
			s := tp.Samples
			if tp.SamplesOK != tc.wantOK || len(s) != tc.wantSamples {
				t.Fatalf("%d samples (ok=%v), want %d (ok=%v)", len(s), tp.SamplesOK, tc.wantSamples, tc.wantOK)
			}
			if !tc.wantOK {
				return
			}
			want := float64(tc.c*200) / (float64(lat) / 1e9) // tok/s of an ideal loop
			for _, x := range s {
				if x < want*0.999 || x > want*1.001 {
					t.Errorf("sample %.2f tok/s, want %.2f", x, want)
				}
			}
		})
	}
}

func TestDistOf(t *testing.T) {
	d := DistOf([]float64{5, 1, 4, 2, 3})
	if d.N != 5 || d.Mean != 3 || d.P50 != 3 || d.Min != 1 || d.Max != 5 || !near(d.P99, 4.96) || !near(d.P90, 4.6) {
		t.Errorf("DistOf = %+v", d)
	}
	if (DistOf(nil) != Dist{}) {
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
