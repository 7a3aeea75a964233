package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/prompts"
	"github.com/bakeoff-dev/bakeoff/results"
)

// echoLengthServer streams exactly the max_tokens each request asks for.
func echoLengthServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":"tiny"}]}`) })
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			MaxTokens int `json:"max_tokens"`
		}
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "text/event-stream")
		for range req.MaxTokens {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a \"}}]}\n\n")
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", req.MaxTokens)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestSweepWorkloadFlags: --synthetic builds, from --seed, the set the
// campaign fingerprinted, and its drawn lengths reach the server;
// --output-lengths recorded sends a file's recorded lengths.
func TestSweepWorkloadFlags(t *testing.T) {
	srv := echoLengthServer(t)
	dir := t.TempDir()
	const specText = "count=20 input=uniform(min=20,max=60) output=uniform(min=2,max=30)"
	spec, err := prompts.ParseSynthetic(specText)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := prompts.Synthesize(spec, 5)
	file := filepath.Join(dir, "w.jsonl")
	if err := os.WriteFile(file, []byte(`{"prompt": "a", "category": "code", "output_tokens": 12}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		flags []string
		check func(maxTokens, tokens int, category string) bool
	}{
		{"synthetic", []string{"--synthetic", specText, "--seed", "5"},
			func(m, n int, _ string) bool { return m >= 2 && m <= 30 && n == m }},
		{"recorded", []string{"--prompts", file, "--output-lengths", "recorded"},
			func(m, n int, c string) bool { return m == 12 && n == 12 && c == "code" }},
		{"file, max_tokens", []string{"--prompts", file},
			func(m, n int, c string) bool { return m == 0 && n == 3 && c == "code" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.name+".jsonl")
			e, _, stderr := testEnv()
			args := append([]string{"sweep", "--url", srv.URL, "--concurrency", "2", "--requests", "10",
				"--warmup", "0", "--max-tokens", "3", "--out", out}, tt.flags...)
			if code := run(context.Background(), e, args); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			recs, err := results.ReadRecords(out)
			if err != nil || len(recs) != 10 {
				t.Fatalf("%d records: %v", len(recs), err)
			}
			for _, r := range recs {
				if !tt.check(r.MaxTokens, r.Tokens, r.Category) {
					t.Errorf("record max_tokens %d tokens %d category %q", r.MaxTokens, r.Tokens, r.Category)
				}
			}
			if tt.name == "synthetic" && recs[0].PromptSet != want.Hash {
				t.Errorf("prompt set %s, want the campaign's %s", recs[0].PromptSet, want.Hash)
			}
		})
	}
	for _, bad := range [][]string{
		{"--synthetic", "input=5"},
		{"--synthetic", specText, "--prompts", file},
		{"--output-lengths", "longest"},
	} {
		e, _, stderr := testEnv()
		if code := run(context.Background(), e, append([]string{"sweep", "--url", srv.URL}, bad...)); code != exitBadInput ||
			!strings.Contains(stderr.String(), "bakeoff sweep:") {
			t.Errorf("%v: exit %d, stderr %s", bad, code, stderr)
		}
	}
}
