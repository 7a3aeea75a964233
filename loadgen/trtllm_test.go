package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// iterationServer is a trtllm-serve stand-in: every completion adds one
// iteration to a queue of iteration statistics (3 requests with drafts, 4
// draft tokens each, accepted as given), and GET /metrics answers with the
// queue as a JSON array and empties it, as get_iteration_stats does. With
// asStrings each iteration is queued as a JSON string, as some releases
// do; with accepted < 0 the iterations carry no specDecodingStats, as a
// server that does not speculate. Before the first completion the queue
// already holds five iterations that accepted every draft (what came
// before the level), which the scrape before the level must empty.
func iterationServer(t *testing.T, accepted int, asStrings bool) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	queue := []any{}
	push := func(it map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		if asStrings {
			b, _ := json.Marshal(it)
			queue = append(queue, string(b))
			return
		}
		queue = append(queue, it)
	}
	for i := range 5 {
		push(map[string]any{"iter": i, "iterLatencyMS": 12.5, "gpuMemUsage": 1 << 30, "specDecodingStats": map[string]any{
			"numDraftTokens": 12, "numAcceptedTokens": 12, "numRequestsWithDraftTokens": 3}})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		it := map[string]any{"iter": 100, "iterLatencyMS": 20.0}
		if accepted >= 0 {
			it["specDecodingStats"] = map[string]any{
				"numDraftTokens": 12, "numAcceptedTokens": accepted, "numRequestsWithDraftTokens": 3,
				"acceptanceLength": 1 + float64(accepted)/3, "iterLatencyMS": 2.5, "draftOverhead": 0.1}
		}
		push(it)
		script{chunks: 2}.serve(w, r)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		out := queue
		queue = []any{}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestTRTLLMAcceptLength: the accept length of a TensorRT-LLM level comes
// from its iteration statistics, 1 + accepted / requests with drafts over
// the level's iterations (those queued before it, emptied by the scrape
// before the level, not among them: they would give 5), with no warning
// about the JSON answer; iterations without drafts give none.
func TestTRTLLMAcceptLength(t *testing.T) {
	for _, tc := range []struct {
		name      string
		accepted  int
		asStrings bool
		want      float64
	}{
		{"objects", 6, false, 3},
		{"strings", 3, true, 2},
		{"no drafts accepted", 0, false, 1},
		{"not speculating", -1, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := iterationServer(t, tc.accepted, tc.asStrings)
			res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{2}, Requests: 6,
				Prompts: testPrompts(t), Engine: engine.Lookup(engine.TRTLLM), MetricsDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			l := res.Levels[0]
			// Only the scrapes' warnings are this test's: a busy machine
			// may add its own about the load generator.
			for _, w := range l.Warnings {
				if strings.Contains(w, "/metrics") || strings.Contains(w, "iteration statistics") {
					t.Errorf("warning about the metrics answer: %q", w)
				}
			}
			if tc.want == 0 {
				if l.AcceptLength != nil {
					t.Errorf("accept length %v from a server that does not speculate", *l.AcceptLength)
				}
				return
			}
			if l.AcceptLength == nil || l.AcceptLengthSource != engine.SourceTRTLLMIterationStats {
				t.Fatalf("accept length %v from %q, want %v from the iteration statistics", l.AcceptLength, l.AcceptLengthSource, tc.want)
			}
			if d := *l.AcceptLength - tc.want; d > 1e-9 || d < -1e-9 {
				t.Errorf("accept length %v, want %v", *l.AcceptLength, tc.want)
			}
		})
	}
}
