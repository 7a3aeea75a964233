package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// promptRecorder is a streaming server that keeps every prompt it is sent.
type promptRecorder struct {
	mu      sync.Mutex
	prompts []string
}

func (p *promptRecorder) server(t *testing.T, mux *http.ServeMux) *httptest.Server {
	if mux == nil {
		mux = http.NewServeMux()
	}
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":"m"}]}`) })
	handle := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Prompt   string `json:"prompt"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("request body: %v", err)
		}
		text := req.Prompt
		if len(req.Messages) > 0 {
			text = req.Messages[0].Content
		}
		p.mu.Lock()
		p.prompts = append(p.prompts, text)
		p.mu.Unlock()
		script{chunks: 2, completions: strings.HasSuffix(r.URL.Path, "/completions") && !strings.Contains(r.URL.Path, "chat")}.serve(w, r)
	}
	mux.HandleFunc("/v1/chat/completions", handle)
	mux.HandleFunc("/v1/completions", handle)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestUniquePrompts: every request of a sweep (warm-up included) starts
// with its own prefix, and two sweeps send exactly the same texts, so two
// scenarios still get the identical load.
func TestUniquePrompts(t *testing.T) {
	for _, endpoint := range []string{EndpointChat, EndpointCompletions} {
		t.Run(endpoint, func(t *testing.T) {
			var runs [][]string
			for range 2 {
				rec := &promptRecorder{}
				srv := rec.server(t, nil)
				_, err := Run(context.Background(), Options{URL: srv.URL, Endpoint: endpoint, Concurrency: []int{1, 3},
					Requests: 40, Warmup: 2, Prompts: testPrompts(t), UniquePrompts: true})
				if err != nil {
					t.Fatal(err)
				}
				got := slices.Clone(rec.prompts)
				slices.Sort(got)
				if n := len(slices.Compact(slices.Clone(got))); n != len(got) || n != 82 {
					t.Errorf("%d distinct prompts of %d sent, want 82 of 82", n, len(got))
				}
				for _, p := range got {
					if !strings.HasPrefix(p, "[c1-r0-") && !strings.HasPrefix(p, "[c3-r0-") && !strings.HasPrefix(p, "[w-") {
						t.Errorf("prompt without its prefix: %.40q", p)
					}
				}
				runs = append(runs, got)
			}
			if !slices.Equal(runs[0], runs[1]) {
				t.Error("two sweeps sent different prompts")
			}
		})
	}
	// Without the option the prompts go as written.
	rec := &promptRecorder{}
	srv := rec.server(t, nil)
	if _, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{1}, Requests: 40, Prompts: testPrompts(t)}); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(rec.prompts[0], "[c") {
		t.Errorf("a prefix without the option: %.40q", rec.prompts[0])
	}
}
