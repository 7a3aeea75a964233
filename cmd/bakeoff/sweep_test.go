package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// sseServer is a minimal OpenAI-compatible server: three chunks of two
// tokens, a usage chunk, [DONE]. It answers 500 when fail is set and checks
// the bearer token when key is not empty.
func sseServer(t *testing.T, key string, fail *atomic.Bool) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"tiny"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		if fail != nil && fail.Load() {
			http.Error(w, "engine crashed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 3; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab \"}}]}\n\n")
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6}}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestSweepText(t *testing.T) {
	srv := sseServer(t, "", nil)
	dir := t.TempDir()
	out, levels := filepath.Join(dir, "requests.jsonl"), filepath.Join(dir, "levels.json")
	e, stdout, stderr := testEnv()
	code := run(context.Background(), e, []string{"sweep", "--url", srv.URL, "--concurrency", "1,3",
		"--requests", "6", "--warmup", "2", "--out", out, "--levels", levels})
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	text := stdout.String()
	for _, want := range []string{"model tiny", "warm-up: 2 requests", "C=  1 | 6 requests | throughput:",
		"C=  3 | 6 requests", "TTFT p50/p99:", "TPOT p50/p99:", "ok: 6/6", "summary: 2 levels, 12 requests, 0 failed", "client: dispatch lag p99 at most"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	recs, err := results.ReadRecords(out)
	if err != nil || len(recs) != 2+12 {
		t.Fatalf("%d records (%v), want 14", len(recs), err)
	}
	for _, r := range recs {
		if !r.OK() || r.Tokens != 6 || r.PromptSet == "" {
			t.Errorf("record %+v", r)
		}
	}
	var ls []measure.LevelSummary
	data, _ := os.ReadFile(levels)
	if err := json.Unmarshal(data, &ls); err != nil || len(ls) != 2 || ls[1].Level != measure.ConcurrencyLevel(3) || ls[1].Tokens != 36 {
		t.Errorf("levels file %s (%v)", data, err)
	}

	// A second sweep appends to the same records file.
	e, _, _ = testEnv()
	run(context.Background(), e, []string{"sweep", "--url", srv.URL, "--concurrency", "1", "--requests", "2",
		"--warmup", "0", "--out", out})
	if recs, _ := results.ReadRecords(out); len(recs) != 16 {
		t.Errorf("%d records after appending, want 16", len(recs))
	}
}

// TestSweepRates runs an open-loop sweep through the command: each level
// is named by its rate, and every record carries its rate and lateness.
func TestSweepRates(t *testing.T) {
	srv := sseServer(t, "", nil)
	dir := t.TempDir()
	out, levels := filepath.Join(dir, "requests.jsonl"), filepath.Join(dir, "levels.json")
	e, stdout, stderr := testEnv()
	code := run(context.Background(), e, []string{"sweep", "--url", srv.URL, "--rates", "50,100.5", "--burstiness", "2",
		"--requests", "20", "--warmup", "1", "--out", out, "--levels", levels})
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	text := stdout.String()
	for _, want := range []string{"rates [50 100.5] req/s, burstiness 2", "   50 req/s | 20 requests", "100.5 req/s | 20 requests", "sent "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	recs, err := results.ReadRecords(out)
	if err != nil || len(recs) != 1+40 {
		t.Fatalf("%d records (%v), want 41", len(recs), err)
	}
	for _, r := range recs[1:] {
		if r.Warmup || (r.Rate != 50 && r.Rate != 100.5) || r.Level != measure.RateLevel(r.Rate) {
			t.Errorf("record %+v: want a rate and its level key", r)
		}
	}
	var ls []measure.LevelSummary
	data, _ := os.ReadFile(levels)
	if err := json.Unmarshal(data, &ls); err != nil || len(ls) != 2 || ls[1].Rate != 100.5 || ls[1].ArrivalRate == 0 {
		t.Errorf("levels file %s (%v)", data, err)
	}
}

func TestSweepJSON(t *testing.T) {
	const key = "sk-do-not-print-me"
	srv := sseServer(t, key, nil)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.jsonl")
	e, stdout, stderr := testEnv()
	e.Getenv = func(k string) string {
		if k == "MY_KEY" {
			return key
		}
		return ""
	}
	code := run(context.Background(), e, []string{"sweep", "--url", srv.URL, "--concurrency", "2",
		"--requests", "4", "--warmup", "1", "--api-key-env", "MY_KEY", "--json", "--out", out,
		"--metrics-dir", filepath.Join(dir, "metrics")})
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var kinds []string
	sc := bufio.NewScanner(stdout)
	var ends int
	for sc.Scan() {
		var ev loadgen.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Kind == "" {
			t.Fatalf("not an event line: %q (%v)", sc.Text(), err)
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == loadgen.EventLevelEnd {
			ends++
			if ev.Summary == nil || ev.Summary.OK != 4 {
				t.Errorf("level_end %+v", ev.Summary)
			}
		}
	}
	if ends != 1 || kinds[0] != loadgen.EventStart || kinds[len(kinds)-1] != "done" {
		t.Errorf("event kinds %v", kinds)
	}
	files, _ := os.ReadFile(out)
	for _, b := range [][]byte{stdout.Bytes(), stderr.Bytes(), files} {
		if bytes.Contains(b, []byte(key)) {
			t.Error("the API key was written out")
		}
	}
}

func TestSweepAllFailedExits1(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	srv := sseServer(t, "", &fail)
	e, stdout, stderr := testEnv()
	code := run(context.Background(), e, []string{"sweep", "--url", srv.URL, "--model", "m",
		"--concurrency", "2", "--requests", "4", "--warmup", "0"})
	if code != exitFailed {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(stdout.String(), "ok: 0/4 (failed: http 4)") || !strings.Contains(stderr.String(), "every request failed") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

func TestSweepBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no url", nil, "--url is required"},
		{"bad url", []string{"--url", "localhost:30000"}, "want http://HOST:PORT"},
		{"bad levels", []string{"--url", "http://127.0.0.1:1", "--concurrency", "1,x"}, "--concurrency"},
		{"zero level", []string{"--url", "http://127.0.0.1:1", "--concurrency", "0"}, "--concurrency"},
		{"bad requests", []string{"--url", "http://127.0.0.1:1", "--requests", "many"}, "--requests"},
		{"rates and concurrency", []string{"--url", "http://127.0.0.1:1", "--rates", "1", "--concurrency", "2"}, "--rates and --concurrency: want one of the two"},
		{"bad rate", []string{"--url", "http://127.0.0.1:1", "--rates", "1,0"}, "--rates"},
		{"bad burstiness", []string{"--url", "http://127.0.0.1:1", "--rates", "1", "--burstiness", "0"}, "--burstiness"},
		{"bad cap", []string{"--url", "http://127.0.0.1:1", "--rates", "1", "--max-in-flight", "0"}, "--max-in-flight"},
		{"bad endpoint", []string{"--url", "http://127.0.0.1:1", "--endpoint", "generate"}, "--endpoint"},
		{"unset key", []string{"--url", "http://127.0.0.1:1", "--api-key-env", "NOPE"}, "NOPE"},
		{"unknown engine", []string{"--url", "http://127.0.0.1:1", "--engine", "tgi"}, `--engine "tgi": want generic, llamacpp, sglang, trtllm or vllm`},
		{"missing prompts", []string{"--url", "http://127.0.0.1:1", "--prompts", "/no/such.jsonl"}, "--prompts"},
		{"unknown flag", []string{"--url", "http://127.0.0.1:1", "--bogus"}, "bogus"},
		{"stray argument", []string{"--url", "http://127.0.0.1:1", "extra"}, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, stderr := testEnv()
			if code := run(context.Background(), e, append([]string{"sweep"}, tt.args...)); code != exitBadInput {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", stderr, tt.want)
			}
		})
	}
}

func TestSweepUnreachable(t *testing.T) {
	e, _, stderr := testEnv()
	code := run(context.Background(), e, []string{"sweep", "--url", "http://127.0.0.1:1", "--concurrency", "1"})
	if code != exitFailed || !strings.Contains(stderr.String(), "asking http://127.0.0.1:1 for its model") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestSweepStoppedKeepsWhatWasMeasured(t *testing.T) {
	// A server that starts every stream and then never finishes it.
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	out, levels := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "l.json")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	e, _, stderr := testEnv()
	code := run(ctx, e, []string{"sweep", "--url", srv.URL, "--model", "m", "--concurrency", "3",
		"--requests", "9", "--warmup", "0", "--out", out, "--levels", levels})
	if code != exitFailed || !strings.Contains(stderr.String(), stoppedMessage) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	recs, err := results.ReadRecords(out)
	if err != nil || len(recs) == 0 || len(recs) > 3 {
		t.Fatalf("%d records (%v), want the ones in flight", len(recs), err)
	}
	for _, r := range recs {
		if r.ErrClass != measure.ErrCanceled {
			t.Errorf("record class %q, want canceled", r.ErrClass)
		}
	}
	var ls []measure.LevelSummary
	data, _ := os.ReadFile(levels)
	if err := json.Unmarshal(data, &ls); err != nil || len(ls) != 1 || ls[0].FailedByClass[measure.ErrCanceled] != len(recs) {
		t.Errorf("levels file %s (%v)", data, err)
	}
}
