package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// lengthServer answers every request with exactly the max_tokens it asked
// for, one token per chunk, as a server with ignore_eos does: what comes
// back is what the request asked for.
func lengthServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":"m"}]}`) })
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			MaxTokens *int `json:"max_tokens"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.MaxTokens == nil {
			t.Errorf("request without max_tokens: %s", body)
			http.Error(w, "no max_tokens", http.StatusBadRequest)
			return
		}
		script{chunks: *req.MaxTokens}.serve(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestPerRequestMaxTokens: a set's own output lengths reach the server as
// each request's max_tokens, and each record says which category and which
// max_tokens its request had.
func TestPerRequestMaxTokens(t *testing.T) {
	file, err := prompts.Parse("w.jsonl", []byte(`{"prompt": "a", "category": "code", "output_tokens": 7}
{"conversations": [{"from": "human", "value": "b"}, {"from": "gpt", "value": "one two three"}], "category": "chat"}
{"prompt": "c", "category": "chat"}
`))
	if err != nil {
		t.Fatal(err)
	}
	synth, err := prompts.Synthesize(prompts.SyntheticSpec{Count: 5,
		Input:  prompts.Dist{Kind: prompts.DistFixed, Value: 30},
		Output: prompts.Dist{Kind: prompts.DistUniform, Min: 3, Max: 40}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  *prompts.Set
	}{
		{"recorded", file.WithRecordedLengths()},
		{"fixed", file},
		{"synthetic", synth},
	}
	const sweepMax = 11
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := lengthServer(t)
			records, got := collect()
			res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{2}, Requests: 12, Warmup: 1,
				MaxTokens: sweepMax, Prompts: tt.set, Records: records})
			if err != nil {
				t.Fatal(err)
			}
			// The level summary has a figure per category when the set has
			// categories (the synthetic set has none).
			var cats []string
			reqs := 0
			for _, c := range res.Levels[0].Categories {
				cats = append(cats, c.Category)
				reqs += c.Requests
			}
			if want := len(tt.set.Categories()) > 0; want != (len(cats) == 2 && cats[0] == "chat" && cats[1] == "code" && reqs == 12) {
				t.Errorf("level categories %v over %d requests", cats, reqs)
			}
			recs := got()
			if len(recs) != 13 {
				t.Fatalf("%d records", len(recs))
			}
			for _, r := range recs {
				p := tt.set.Prompts[r.Prompt]
				want := sweepMax
				if p.MaxTokens > 0 {
					want = p.MaxTokens
				}
				if !r.OK() || r.Tokens != want || r.MaxTokens != p.MaxTokens || r.Category != p.Category {
					t.Errorf("prompt %d: %d tokens, record max_tokens %d category %q (%s); want %d tokens, %d, %q",
						r.Prompt, r.Tokens, r.MaxTokens, r.Category, r.Error, want, p.MaxTokens, p.Category)
				}
			}
		})
	}
	// The recorded lengths: 7 from output_tokens, 4 from three words of
	// answer, and the sweep's max_tokens for the prompt with none.
	recorded := file.WithRecordedLengths()
	if recorded.Prompts[0].MaxTokens != 7 || recorded.Prompts[1].MaxTokens != 4 || recorded.Prompts[2].MaxTokens != 0 {
		t.Errorf("recorded max_tokens %d %d %d, want 7 4 0", recorded.Prompts[0].MaxTokens, recorded.Prompts[1].MaxTokens,
			recorded.Prompts[2].MaxTokens)
	}
}

// TestEstimatedTokensUseTheRequestsMaxTokens: without usage, a stream
// stopped by length produced its own request's max_tokens, not the sweep's.
func TestEstimatedTokensUseTheRequestsMaxTokens(t *testing.T) {
	srv := newServer(t, script{chunks: 3, tokensPerChunk: 3, noUsage: true, finish: "length"})
	q := &requester{client: NewHTTPClient(1), url: srv.URL + "/v1/chat/completions", timeout: DefaultRequestTimeout, maxTokens: 50}
	rec := measure.Record{MaxTokens: 9}
	q.do(context.Background(), []byte(`{}`), &rec)
	if !rec.OK() || !rec.TokensEstimated || rec.Tokens != 9 {
		t.Errorf("tokens %d (estimated %v, %s), want 9", rec.Tokens, rec.TokensEstimated, rec.Error)
	}
}
