package orchestrator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/llamatest"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestWorkloadCampaign runs `bakeoff run` with a JSONL prompt set of
// categories and recorded output lengths against a server speaking
// llama.cpp's dialect, which generates exactly max_tokens and reports its
// drafts per response: each request's recorded length reaches the server
// through the sweep on the host, the records keep their categories, and
// verdict.json and the text report give the accept length per category.
func TestWorkloadCampaign(t *testing.T) {
	w := newWorld(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("engine: llamacpp\nmodel: /models/q.gguf\nenv:\n  %s: \"1\"\nargs:\n  parallel: 4\n  slot-save-path: %s\n  cache-ram: 0\n  model-draft: /models/d.gguf\n  spec-type: draft-simple\n",
		llamatest.Env, filepath.Join(w.root, "slots"))
	if err := os.WriteFile(filepath.Join(w.scenDir, "draft.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	set := `{"prompt": "Write a Go function that adds two numbers.", "category": "code", "output_tokens": 12}
{"prompt": "Write a Python class for a stack.", "category": "code", "output_tokens": 20}
{"conversations": [{"from": "human", "value": "How are you?"}, {"from": "gpt", "value": "Fine thanks, and you today?"}], "category": "chat"}
`
	if err := os.WriteFile(filepath.Join(w.root, "configs", "w.jsonl"), []byte(set), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`campaign: workload
host: local
engine:
  command: [%q]
  port: %d
  health_timeout: 30s
  poll_interval: 100ms
  stop_grace: 5s
gpu:
  wait_timeout: 10s
sweep:
  concurrency: [1, 3]
  requests: 9
  max_tokens: 50
  warmup: 1
  endpoint: completions
  prompts: {file: w.jsonl, output_lengths: recorded}
rounds: 1
baseline: draft
scenarios: [draft]
`, self, w.port)
	w.config = filepath.Join(w.root, "configs", "workload.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(w.root, "run")
	out, err := w.bakeoff("run", w.config, "--out", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	run := readSummary(t, dir)
	if s := scenarioResult(t, run, "draft"); s.Status != results.StatusOK {
		t.Fatalf("draft: %s %s\n%s", s.Status, s.Reason, out)
	}
	recs, err := run.Records("draft")
	if err != nil {
		t.Fatal(err)
	}
	// "Fine thanks, and you today?" is five words: 7 tokens.
	want := map[int]struct {
		tokens int
		cat    string
	}{0: {12, "code"}, 1: {20, "code"}, 2: {7, "chat"}}
	for _, r := range recs {
		if w := want[r.Prompt]; !r.OK() || r.Tokens != w.tokens || r.MaxTokens != w.tokens || r.Category != w.cat {
			t.Errorf("prompt %d: %d tokens (max_tokens %d), category %q; want %d, %q (%s)", r.Prompt, r.Tokens, r.MaxTokens,
				r.Category, w.tokens, w.cat, r.Error)
		}
	}
	f, err := os.Open(filepath.Join(dir, report.Dir, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := report.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	l := v.Scenario("draft").Level(measure.ConcurrencyLevel(3))
	if l == nil || len(l.Categories) != 2 {
		t.Fatalf("C=3 categories: %+v", l)
	}
	for _, c := range l.Categories {
		// llamatest accepts n/2 (rounded down) of n drafted tokens: code's
		// 12 and 20 tokens give 2, chat's 7 tokens 7/4.
		wantAL := map[string]float64{"code": 2, "chat": 1.75}[c.Category]
		got := -1.0 // none
		if c.AcceptLength != nil {
			got = *c.AcceptLength
		}
		if got != wantAL || c.Requests == 0 {
			t.Errorf("C=3 %s: %d requests, accept length %v, want %v", c.Category, c.Requests, got, wantAL)
		}
	}
	if text := w.detail(dir); !strings.Contains(text, "code") || !strings.Contains(text, "accept length 1.75") {
		t.Errorf("the run's report does not show the categories:\n%s", text)
	}
}
