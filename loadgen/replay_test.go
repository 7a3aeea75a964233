package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// evenTrace is a Mooncake-form trace of n rows gap apart, each of two
// blocks of 16 tokens whose first is shared by every row.
func evenTrace(t testing.TB, n int, gap time.Duration) *prompts.Trace {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp": %g, "input_length": 20, "output_length": 3, "hash_ids": [0, %d]}`+"\n",
			float64(i)*float64(gap)/float64(time.Millisecond), i+1)
	}
	tr, err := prompts.ParseTrace("even.jsonl", []byte(b.String()), 16)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestReplaySchedule: each speed sends every row, row i as request i, due
// at its timestamp divided by the speed, with the row's own max_tokens.
func TestReplaySchedule(t *testing.T) {
	tr := evenTrace(t, 20, 10*time.Millisecond)
	srv := newServer(t, script{chunks: 2})
	rf, got := collect()
	res, err := Run(context.Background(), Options{URL: srv.URL, Speeds: []float64{1, 2.5}, Trace: tr, Records: rf})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Levels) != 2 || res.Levels[0].Level != measure.SpeedLevel(1) || res.Levels[1].Level != measure.SpeedLevel(2.5) {
		t.Fatalf("levels %+v", res.Levels)
	}
	for _, speed := range []float64{1, 2.5} {
		var recs []measure.Record
		for _, r := range got() {
			if r.Level == measure.SpeedLevel(speed) {
				recs = append(recs, r)
			}
		}
		slices.SortFunc(recs, func(a, b measure.Record) int { return a.Seq - b.Seq })
		if len(recs) != len(tr.Rows) {
			t.Fatalf("speed %g: %d records, want %d", speed, len(recs), len(tr.Rows))
		}
		due := tr.At(speed)
		start := recs[0].SendNs - recs[0].LateNs
		for i, r := range recs {
			if r.Prompt != i || r.Speed != speed || r.MaxTokens != 3 || !r.OK() {
				t.Fatalf("speed %g record %d: %+v", speed, i, r)
			}
			if at := r.SendNs - r.LateNs - start; at != int64(due[i]) {
				t.Errorf("speed %g row %d due at %s, want %s", speed, i, time.Duration(at), due[i])
			}
		}
	}
	if res.Levels[0].InputLengths != measure.LengthsEstimated {
		t.Errorf("lengths %q on the chat endpoint of a generic server, want %q", res.Levels[0].InputLengths, measure.LengthsEstimated)
	}
}

// oneAtATime serves one request at a time, each hold long: a server that
// cannot keep up with arrivals faster than 1/hold.
func oneAtATime(t testing.TB, hold time.Duration) *httptest.Server {
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"data":[{"id":"m"}]}`) })
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		time.Sleep(hold)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestReplaySaturated: a trace whose rows come five times faster than the
// server can answer them is marked saturated, as a rate it cannot keep up
// with is; the same trace at a tenth of the speed is not.
func TestReplaySaturated(t *testing.T) {
	tr := evenTrace(t, 100, 2*time.Millisecond)
	srv := oneAtATime(t, 10*time.Millisecond)
	res, err := Run(context.Background(), Options{URL: srv.URL, Speeds: []float64{0.1, 1}, Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	if slow, fast := res.Levels[0], res.Levels[1]; slow.Saturated || !fast.Saturated {
		t.Errorf("speed 0.1 saturated %t (%s), speed 1 saturated %t (%s): want only the second",
			slow.Saturated, slow.Saturation, fast.Saturated, fast.Saturation)
	}
}

// BenchmarkReplayTiming replays a trace of a row every millisecond against
// a fast local server and reports how late the sends were against the
// scaled timestamps (late_ns: a send is never early), p50 and p99 in ms.
// docs/PERFORMANCE.md gives the figures and the machine.
func BenchmarkReplayTiming(b *testing.B) {
	for _, gap := range []time.Duration{time.Millisecond, 5 * time.Millisecond} {
		b.Run("gap="+gap.String(), func(b *testing.B) { benchReplay(b, evenTrace(b, 2000, gap)) })
	}
}

func benchReplay(b *testing.B, tr *prompts.Trace) {
	srv := newServer(b, script{chunks: 2})
	var late []float64
	for b.Loop() {
		rf, got := collect()
		if _, err := Run(context.Background(), Options{URL: srv.URL, Speeds: []float64{1}, Trace: tr, Records: rf}); err != nil {
			b.Fatal(err)
		}
		for _, r := range got() {
			late = append(late, float64(r.LateNs)/1e6)
		}
	}
	slices.Sort(late)
	b.ReportMetric(measure.Percentile(late, 50), "late-p50-ms")
	b.ReportMetric(measure.Percentile(late, 99), "late-p99-ms")
}
