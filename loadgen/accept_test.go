package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// replay serves the recorded stream in testdata/file to every request,
// event by event, and keeps the bodies it was sent.
func replay(t *testing.T, file string) (*httptest.Server, func() [][]byte) {
	t.Helper()
	stream, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies [][]byte
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"data":[{"id":"m"}]}`)) })
	serve := func(w http.ResponseWriter, r *http.Request) {
		var b json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream)
	}
	mux.HandleFunc("/v1/chat/completions", serve)
	mux.HandleFunc("/v1/completions", serve)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, func() [][]byte { mu.Lock(); defer mu.Unlock(); return slices.Clone(bodies) }
}

// TestResponseAcceptance: each engine's per-request speculative counts,
// in the shape its source documents (testdata/README.md), reach the
// record: verify steps, drafts proposed and accepted, the histogram.
func TestResponseAcceptance(t *testing.T) {
	tests := []struct {
		name, file                string
		tokens                    int
		steps, proposed, accepted int
		hist                      []int
	}{
		{"sglang sglext.spec_tokens_details", "sglang-spec-details.sse", 106, 43, 215, 63, []int{11, 14, 11, 4, 0, 3}},
		{"vllm metrics.speculative_decoding", "vllm-spec-metrics.sse", 54, 43, 129, 10, []int{39, 1, 0, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := replay(t, tt.file)
			rec := doOnce(t, srv.URL+"/v1/chat/completions", 10*time.Second)
			if !rec.OK() || rec.Tokens != tt.tokens {
				t.Fatalf("request: %q, %d tokens, want %d", rec.Error, rec.Tokens, tt.tokens)
			}
			steps, ok := rec.Steps()
			d, a, dok := rec.Draft()
			if !ok || steps != tt.steps || !dok || d != tt.proposed || a != tt.accepted || !slices.Equal(rec.AcceptHistogram, tt.hist) {
				t.Errorf("steps %d (%v), drafts %d/%d (%v), histogram %v; want %d, %d/%d, %v",
					steps, ok, a, d, dok, rec.AcceptHistogram, tt.steps, tt.accepted, tt.proposed, tt.hist)
			}
			// The histogram agrees with the counts, as both engines keep it.
			sum, weighted := 0, 0
			for j, n := range rec.AcceptHistogram {
				sum, weighted = sum+n, weighted+j*n
			}
			if sum != steps || weighted != a {
				t.Errorf("histogram sums to %d steps and %d accepted, want %d and %d", sum, weighted, steps, a)
			}
		})
	}
}

// TestAcceptRequestFields: a sweep for SGLang asks every request for its
// speculative details, the warm-up's too; one for a server of unknown
// engine sends no field it might refuse. The level's accept length comes
// from the responses and names them.
func TestAcceptRequestFields(t *testing.T) {
	for _, tt := range []struct {
		engine string
		field  bool
		source string
	}{
		{engine.SGLang, true, engine.SourceSGLangSpecDetails},
		{engine.Generic, false, engine.SourceAnyResponse},
	} {
		t.Run(tt.engine, func(t *testing.T) {
			srv, bodies := replay(t, "sglang-spec-details.sse")
			for _, unique := range []bool{false, true} {
				res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{2}, Requests: 4, Warmup: 1,
					MaxTokens: 16, Prompts: testPrompts(t), Engine: engine.Lookup(tt.engine), UniquePrompts: unique})
				if err != nil {
					t.Fatal(err)
				}
				l := res.Levels[0]
				if l.AcceptLength == nil || l.AcceptLengthSource != tt.source || *l.AcceptLength != 106.0/43 {
					got := "none"
					if l.AcceptLength != nil {
						got = fmt.Sprintf("%.6f", *l.AcceptLength)
					}
					t.Errorf("accept length %s from %q, want %.6f (106/43) from %q", got, l.AcceptLengthSource, 106.0/43, tt.source)
				}
			}
			got := bodies()
			if len(got) != 10 {
				t.Fatalf("%d requests, want 10", len(got))
			}
			for _, b := range got {
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatalf("body %s: %v", b, err)
				}
				if v, ok := m["return_spec_tokens_details"]; ok != tt.field || (ok && v != true) {
					t.Errorf("body %s: return_spec_tokens_details %v (%v), want it %v", b, v, ok, tt.field)
				}
			}
		})
	}
}

// TestVLLMAcceptLength: a vLLM level's accept length is vLLM's own
// definition, 1 + accepted / num_spec_steps (its end-to-end test
// test_per_request_spec_decode_metrics), which the captured response gives
// as mean_acceptance_length 1.2326: 10 drafts accepted over 43 steps. Its 54
// tokens over 43 steps would count the prefill's token as a step's.
func TestVLLMAcceptLength(t *testing.T) {
	srv, _ := replay(t, "vllm-spec-metrics.sse")
	res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{2}, Requests: 4,
		MaxTokens: 16, Prompts: testPrompts(t), Engine: engine.Lookup(engine.VLLM), UniquePrompts: true})
	if err != nil {
		t.Fatal(err)
	}
	l := res.Levels[0]
	const want = 1 + 10.0/43
	if l.AcceptLength == nil || l.AcceptLengthSource != engine.SourceVLLMResponseMetrics || math.Abs(*l.AcceptLength-want) > 1e-12 {
		t.Errorf("accept length %v from %q, want %v from %q", l.AcceptLength, l.AcceptLengthSource, want, engine.SourceVLLMResponseMetrics)
	}
}
