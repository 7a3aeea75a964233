package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

func testPrompts(t testing.TB) *prompts.Set {
	t.Helper()
	set, err := prompts.Load(prompts.Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// collect returns a Records callback and a way to read what it got.
func collect() (func(measure.Record) error, func() []measure.Record) {
	var mu sync.Mutex
	var recs []measure.Record
	return func(r measure.Record) error {
			mu.Lock()
			recs = append(recs, r)
			mu.Unlock()
			return nil
		}, func() []measure.Record {
			mu.Lock()
			defer mu.Unlock()
			return append([]measure.Record(nil), recs...)
		}
}

// TestScriptedDelays runs a level against a server with known timing and
// checks the measured figures against it. Sleeps never end early, so lower
// bounds are tight. A loaded machine makes every figure late by how late it
// wakes goroutines, which the server measures on its own waits (lag): the
// bounds a late wake-up can move allow a busy 2-core machine its jitter
// plus as many of those as lie on the figure's path.
func TestScriptedDelays(t *testing.T) {
	const (
		ttft   = 100 * time.Millisecond
		gap    = 10 * time.Millisecond
		chunks = 20
		c      = 4
		n      = 16
	)
	times := &serverTimes{}
	srv := newServer(t, script{chunks: chunks, tokensPerChunk: 2, ttft: ttft, gap: gap, times: times})
	rf, got := collect()
	res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{c}, Requests: n,
		Prompts: testPrompts(t), Records: rf})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "test-model" {
		t.Errorf("model %q", res.Model)
	}
	s := res.Levels[0]
	if s.OK != n || len(got()) != n {
		t.Fatalf("ok %d of %d, %d records", s.OK, s.Requests, len(got()))
	}
	// Each request: 40 tokens; the last chunk arrives at ttft + 19×gap.
	latency := ttft + (chunks-1)*gap
	tokens := 2 * chunks
	tpot := (chunks - 1) * gap / time.Duration(tokens-1)
	// A figure's path holds three wake-ups at most: the server's for the
	// request and for its chunk (the chunks are timed from the request's
	// arrival, so lateness does not add up), the client's for the answer.
	lag := times.lag().Seconds()
	// The slot's own delay between requests, as the client measured it.
	var dispatch float64
	for _, r := range got() {
		dispatch = max(dispatch, time.Duration(r.DispatchLagNs).Seconds())
	}
	t.Logf("latest wake-up %.1f ms, longest dispatch lag %.1f ms", lag*1e3, dispatch*1e3)
	within := func(name string, got, want, lo, hi float64) {
		t.Helper()
		if got < lo || got > hi {
			t.Errorf("%s = %.4f, want %.4f (from %.4f to %.4f; latest wake-up %.1f ms)", name, got, want, lo, hi, lag*1e3)
		}
	}
	// TTFT and latency cannot come in under the script (the server sleeps
	// at least that long); TPOT can, a little, when the first chunk is late
	// and the rest on time: by two wake-ups (the server's, the client's)
	// over the tokens after the first.
	within("TTFT p50", s.TTFTP50, ttft.Seconds(), 0.99*ttft.Seconds(), 1.5*ttft.Seconds()+3*lag)
	within("latency p50", s.LatencyP50, latency.Seconds(), 0.99*latency.Seconds(), 1.5*latency.Seconds()+3*lag)
	tpotLag := 2 * lag / float64(tokens-1)
	within("TPOT p50", s.TPOTP50, tpot.Seconds(), 0.75*tpot.Seconds()-tpotLag, 1.5*tpot.Seconds()+tpotLag)
	// Throughput can fall short of the scripted rate, the more so as each
	// request takes longer by the wake-ups on its path and its slot's
	// dispatch lag, but hardly beat it.
	want := float64(c*tokens) / latency.Seconds()
	slow := float64(c*tokens) / (latency.Seconds() + 3*lag + dispatch)
	within("throughput", s.Throughput, want, 0.6*slow, 1.1*want)
	// A slot is empty only for its dispatch lag between requests, each of
	// which lasts at least the script's latency.
	if least := 0.8 * c * latency.Seconds() / (latency.Seconds() + dispatch); s.AchievedConcurrency < least || s.AchievedConcurrency > c+0.01 {
		t.Errorf("achieved concurrency %.2f, want about %d (at least %.2f with dispatch lags up to %.1f ms)",
			s.AchievedConcurrency, c, least, dispatch*1e3)
	}
	if s.Tokens != n*2*chunks || s.TokensEstimated {
		t.Errorf("tokens %d (estimated %v), want %d from usage", s.Tokens, s.TokensEstimated, n*2*chunks)
	}
}

func TestClosedLoopNeverExceedsC(t *testing.T) {
	var in, peak atomic.Int64
	srv := newServer(t, script{chunks: 3, gap: 5 * time.Millisecond, inFlight: &in, maxInFlight: &peak})
	for _, c := range []int{1, 3, 8} {
		peak.Store(0)
		rf, got := collect()
		_, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{c}, Requests: 5 * c,
			Prompts: testPrompts(t), Records: rf})
		if err != nil {
			t.Fatal(err)
		}
		if p := peak.Load(); p > int64(c) || p < 1 {
			t.Errorf("C=%d: the server saw %d requests at once", c, p)
		}
		// Every sequence number sent once.
		seqs := map[int]bool{}
		for _, r := range got() {
			seqs[r.Seq] = true
		}
		if len(seqs) != 5*c {
			t.Errorf("C=%d: %d distinct sequence numbers, want %d", c, len(seqs), 5*c)
		}
	}
}

func TestCancelStopsPromptlyAndKeepsRecords(t *testing.T) {
	srv := newServer(t, script{chunks: 1000, gap: 50 * time.Millisecond})
	rf, got := collect()
	ctx, cancel := context.WithCancel(context.Background())
	var started sync.Once
	var stoppedAt time.Time
	events := func(e Event) {
		if e.Kind == EventLevelStart {
			started.Do(func() {
				time.AfterFunc(300*time.Millisecond, func() { stoppedAt = time.Now(); cancel() })
			})
		}
	}
	res, err := Run(ctx, Options{URL: srv.URL, Concurrency: []int{5}, Requests: 20, Warmup: 0,
		Prompts: testPrompts(t), Records: rf, Events: events})
	took := time.Since(stoppedAt)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	t.Logf("stopped %v after cancel", took)
	if took > 2*time.Second {
		t.Errorf("took %v to stop after cancel, want about a second at most", took)
	}
	recs := got()
	if len(recs) != 5 {
		t.Fatalf("%d records, want the 5 in flight", len(recs))
	}
	for _, r := range recs {
		if r.ErrClass != measure.ErrCanceled || r.Chunks == 0 {
			t.Errorf("record %d: class %q, chunks %d; want canceled after some chunks", r.Seq, r.ErrClass, r.Chunks)
		}
	}
	if res == nil || len(res.Levels) != 1 || res.Levels[0].Failed != 5 {
		t.Fatalf("result %+v, want the partial level", res)
	}
}

func TestRecordsErrorStopsSweep(t *testing.T) {
	srv := newServer(t, script{chunks: 2})
	n := 0
	_, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{1, 2}, Requests: 10,
		Prompts: testPrompts(t), Records: func(measure.Record) error {
			n++
			if n == 3 {
				return errors.New("disk full")
			}
			return nil
		}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err %v, want the Records error", err)
	}
	if n > 4 {
		t.Errorf("%d records after the error", n)
	}
}

func TestRequestBodyAndOrder(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	var auth []string
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies = append(bodies, b)
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		script{chunks: 1}.serve(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	run := func(seed int64) []int {
		rf, got := collect()
		_, err := Run(context.Background(), Options{URL: srv.URL, Model: "given", APIKey: "sk-secret",
			Concurrency: []int{1}, Requests: 6, Warmup: 2, MaxTokens: 33, Temperature: 0, IgnoreEOS: true,
			Seed: seed, Prompts: testPrompts(t), Records: rf})
		if err != nil {
			t.Fatal(err)
		}
		var order []int
		for _, r := range got() {
			if !r.Warmup {
				order = append(order, r.Prompt)
			}
		}
		return order
	}
	a, b, c := run(1), run(1), run(2)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("same seed, different prompt order: %v vs %v", a, b)
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("different seeds, same prompt order %v", a)
	}
	b0 := bodies[0]
	if b0["model"] != "given" || b0["stream"] != true || b0["max_tokens"] != 33.0 || b0["ignore_eos"] != true ||
		b0["temperature"] != 0.0 || b0["messages"] == nil {
		t.Errorf("request body %v", b0)
	}
	if so, _ := b0["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v, want include_usage", b0["stream_options"])
	}
	if auth[0] != "Bearer sk-secret" {
		t.Errorf("Authorization %q", auth[0])
	}
}

func TestWarmupAndLevels(t *testing.T) {
	srv := newServer(t, script{chunks: 2})
	rf, got := collect()
	var kinds []string
	var mu sync.Mutex
	res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{1, 4}, Requests: 0,
		Warmup: 3, Repeats: 2, Prompts: testPrompts(t), Records: rf, Events: func(e Event) {
			mu.Lock()
			kinds = append(kinds, e.Kind)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	warm := 0
	for _, r := range got() {
		if r.Warmup {
			warm++
		}
	}
	if warm != 3 || len(got()) != 3+2*30+2*30 {
		t.Errorf("%d warm-up of %d records, want 3 of %d", warm, len(got()), 3+2*30+2*30)
	}
	var levels []string
	for _, l := range res.Levels {
		levels = append(levels, fmt.Sprintf("%s/%d:%d", measure.LevelLabel(l.Level), l.Repeat, l.Requests))
	}
	if fmt.Sprint(levels) != "[1/0:30 1/1:30 4/0:30 4/1:30]" {
		t.Errorf("levels %v", levels)
	}
	for _, k := range []string{EventStart, EventWarmup, EventLevelStart, EventProgress, EventLevelEnd} {
		if !containsStr(kinds, k) {
			t.Errorf("no %q event", k)
		}
	}
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestFewRequestsWarns(t *testing.T) {
	srv := newServer(t, script{chunks: 1})
	res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{10}, Requests: 5,
		Prompts: testPrompts(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "fewer than 2×C") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestNoUsageMarksResult(t *testing.T) {
	srv := newServer(t, script{chunks: 3, noUsage: true})
	res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{2}, Requests: 4,
		MaxTokens: 3, Prompts: testPrompts(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.UsageMissing || !res.Levels[0].TokensEstimated || res.Levels[0].Tokens != 12 {
		t.Errorf("usage missing %v, level %+v", res.UsageMissing, res.Levels[0])
	}
}

// metricsServer is a streaming server that also exposes engine metrics:
// vLLM-style speculative counters that grow with every request, SGLang's
// counters of tokens and verify steps (and its gauge, which must not be
// read), and /get_server_info.
func metricsServer(t *testing.T, vllm, sglang bool) *httptest.Server {
	var drafts, accepted, genTokens, verifyCalls atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		drafts.Add(10)
		accepted.Add(17)
		genTokens.Add(5)
		verifyCalls.Add(2)
		script{chunks: 2}.serve(w, r)
	})
	if vllm || sglang {
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
			if vllm {
				fmt.Fprintf(w, "# HELP vllm:spec_decode_num_drafts_total Drafts.\n# TYPE vllm:spec_decode_num_drafts_total counter\n")
				fmt.Fprintf(w, "vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} %d\n", drafts.Load())
				fmt.Fprintf(w, "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n")
				fmt.Fprintf(w, "vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} %d\n", accepted.Load())
			}
			if sglang {
				fmt.Fprintf(w, "# HELP sglang:spec_accept_length The average acceptance length.\n# TYPE sglang:spec_accept_length gauge\n")
				fmt.Fprintf(w, "sglang:spec_accept_length{model_name=\"m\"} 4.5\n")
				fmt.Fprintf(w, "# TYPE sglang:generation_tokens_total counter\nsglang:generation_tokens_total{model_name=\"m\"} %d\n", genTokens.Load())
				fmt.Fprintf(w, "# TYPE sglang:spec_verify_calls_total counter\nsglang:spec_verify_calls_total{model_name=\"m\"} %d\n", verifyCalls.Load())
			}
		})
	}
	if sglang {
		mux.HandleFunc("/get_server_info", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"version":"0.5.9","internal_states":[{"avg_spec_accept_length":2.1}]}`)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestAcceptLength(t *testing.T) {
	tests := []struct {
		name         string
		vllm, sglang bool
		want         float64
		source       string
	}{
		{"vllm counters", true, false, 2.7, engine.SourceVLLMCounters},
		{"sglang counters", false, true, 2.5, engine.SourceSGLangCounters},
		{"no metrics", false, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := metricsServer(t, tt.vllm, tt.sglang)
			dir := t.TempDir()
			res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{2}, Requests: 6,
				Prompts: testPrompts(t), MetricsDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			l := res.Levels[0]
			if tt.source == "" {
				if l.AcceptLength != nil {
					t.Errorf("accept length %v from a server without metrics", *l.AcceptLength)
				}
				return
			}
			if l.AcceptLength == nil || l.AcceptLengthSource != tt.source {
				t.Fatalf("accept length %v source %q, want %v from %q", l.AcceptLength, l.AcceptLengthSource, tt.want, tt.source)
			}
			if d := *l.AcceptLength - tt.want; d > 1e-9 || d < -1e-9 {
				t.Errorf("accept length %v, want %v", *l.AcceptLength, tt.want)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "C002-r0-*"))
			sort.Strings(files)
			if len(files) < 2 {
				t.Errorf("scrapes saved: %v", files)
			}
			for _, f := range files {
				if b, _ := os.ReadFile(f); len(b) == 0 {
					t.Errorf("%s is empty", f)
				}
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	in := `# TYPE vllm:spec_decode_num_drafts counter
vllm:spec_decode_num_drafts_total{engine="0"} 10
vllm:spec_decode_num_drafts_total{engine="1"} 5
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{tp_rank="0",dp_rank="0"} 4
sglang:num_running_reqs{tp_rank="1",dp_rank="0"} 4
sglang:num_running_reqs{tp_rank="4",dp_rank="1"} 6
# TYPE sglang:e2e_request_latency_seconds histogram
sglang:e2e_request_latency_seconds_bucket{le="1.0"} 2
sglang:e2e_request_latency_seconds_bucket{le="+Inf"} 3
sglang:e2e_request_latency_seconds_sum 4.5
sglang:e2e_request_latency_seconds_count 3
`
	got, err := ParseMetrics(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		// A gauge is averaged over the DP groups, each read from one
		// tensor-parallel rank (engine.Counted).
		"sglang:num_running_reqs":                  5,
		"sglang:e2e_request_latency_seconds_count": 3,
		"sglang:e2e_request_latency_seconds_sum":   4.5,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if v := got["vllm:spec_decode_num_drafts_total"]; v != 15 {
		t.Errorf("counter summed over engines = %v, want 15 (all: %v)", v, got)
	}
	if _, err := ParseMetrics(strings.NewReader("this is { not metrics\n")); err == nil {
		t.Error("no error for garbage")
	}
}

func TestModelDiscoveryErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[]}`)
	}))
	defer srv.Close()
	_, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{1}, Prompts: testPrompts(t)})
	if err == nil || !strings.Contains(err.Error(), "lists none") {
		t.Errorf("err %v", err)
	}
}

func TestCompletionsEndpoint(t *testing.T) {
	var got atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/completions", func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		got.Store(b)
		script{chunks: 2, completions: true}.serve(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	set := testPrompts(t)
	res, err := Run(context.Background(), Options{URL: srv.URL + "/", Model: "m", Endpoint: EndpointCompletions,
		Concurrency: []int{1}, Requests: 1, Prompts: set})
	if err != nil || res.Levels[0].OK != 1 || res.Levels[0].Tokens != 2 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	b := got.Load().(map[string]any)
	if p, _ := b["prompt"].(string); p == "" || b["messages"] != nil {
		t.Errorf("completions body %v, want a prompt string and no messages", b)
	}
}

// TestDispatchLagFromStreamEnd: a slot is free when its stream's last event
// arrives, so the time the client then spends reading the rest of the
// response (here a server that holds it open after [DONE]) is the client's
// delay and shows in the next request's dispatch lag. The bounds come from
// the server's own times, not the hold: the next request cannot go out
// before the previous response was closed, and a client that reads [DONE]
// late (a loaded machine) sees less of the hold in its lag.
func TestDispatchLagFromStreamEnd(t *testing.T) {
	const (
		hold     = 50 * time.Millisecond
		requests = 6
	)
	times := &serverTimes{}
	srv := newServer(t, script{chunks: 3, holdAfterDone: hold, times: times})
	rf, got := collect()
	if _, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{1}, Requests: requests,
		Prompts: testPrompts(t), Records: rf}); err != nil {
		t.Fatal(err)
	}
	recs := got()
	done, closed := times.ends()
	if len(recs) != requests || len(closed) != requests {
		t.Fatalf("%d records, %d answers, want %d", len(recs), len(closed), requests)
	}
	// One slot: the server answered the requests in their sequence.
	slices.SortFunc(recs, func(a, b measure.Record) int { return a.Seq - b.Seq })
	seen := 0
	for i, r := range recs[1:] {
		prev := recs[i]
		if prev.EndNs < done[i] {
			t.Fatalf("request %d ended %v before the server sent [DONE]", prev.Seq, time.Duration(done[i]-prev.EndNs))
		}
		// The drain: from the stream's end as the client saw it to the
		// response's close, which the client waited for before sending.
		drain := time.Duration(closed[i] - prev.EndNs)
		if drain > 0 {
			seen++
		}
		// Up to drainGrace: the client stops waiting for the close then,
		// and on a loaded machine the 50 ms hold can outlast it (CI read a
		// drain of 210.9 ms and a lag of 210.6).
		if lag := time.Duration(r.DispatchLagNs); lag < min(drain, drainGrace) {
			t.Errorf("request %d: dispatch lag %v, want at least the %v the previous response stayed open after the client read [DONE] (held %v)",
				r.Seq, lag, drain, hold)
		}
	}
	// A client that took the response's close, not [DONE], for the stream's
	// end would never see the response open after it; one that reads [DONE]
	// on time sees it on every request, a starved one on most.
	if seen == 0 {
		t.Errorf("no request's stream ended before its response was closed: the end is not taken at [DONE]")
	}
}
