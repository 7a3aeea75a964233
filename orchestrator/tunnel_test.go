package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/llamatest"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestTunnelUniquePrompts: a sweep through the tunnel with unique_prompts
// sends every request (warm-up included) with a prefix of its own, as the
// sweep on the host does: no two prompts the server sees begin with the same
// word, so no request can be served another's cached prefix. The server is
// this test binary speaking llama.cpp's dialect, logging every prompt; the
// host is this machine through the remote interface, so the tunnel runs
// without an sshd.
func TestTunnelUniquePrompts(t *testing.T) {
	w := newWorld(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	promptLog := filepath.Join(w.root, "prompts.log")
	scenario := fmt.Sprintf("engine: llamacpp\nmodel: /models/q.gguf\nenv:\n  %s: \"1\"\n  %s: %s\nargs:\n  parallel: 4\n",
		llamatest.Env, llamatest.PromptLogEnv, promptLog)
	if err := os.WriteFile(filepath.Join(w.scenDir, "llama.yaml"), []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`campaign: tunnel
host:
  ssh: bench@127.0.0.1:2222
  workdir: %s
  sweep_mode: tunnel
engine:
  command: [%q]
  port: %d
  health_timeout: 30s
  poll_interval: 100ms
  stop_grace: 5s
gpu:
  wait_timeout: 10s
sweep:
  concurrency: [1, 4]
  requests: 8
  max_tokens: 8
  warmup: 2
  endpoint: completions
  unique_prompts: true
baseline: llama
scenarios: [llama]
rounds: 1
`, filepath.Join(w.root, "remote-work"), self, w.port)
	w.config = filepath.Join(w.root, "configs", "tunnel.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{Host: remote.NewLocal()})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 0 {
		t.Fatalf("failed: %+v", out.Results)
	}
	run := readSummary(t, out.RunDir)
	recs, err := run.Records("llama")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(w.root, "remote-work", "sweeps", "llama", results.RequestsFile)); err == nil {
		t.Error("the sweep ran on the host, not through the tunnel")
	}

	data, err := os.ReadFile(promptLog)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]string{} // a prompt's first word → the prompt
	sent := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var p llamatest.LoggedPrompt
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("prompt log line %q: %v", line, err)
		}
		if !p.Stream {
			continue // the smoke request, not the sweep's
		}
		sent++
		word, _, _ := strings.Cut(strings.TrimSpace(p.Prompt), " ")
		if other, ok := first[word]; ok {
			t.Errorf("two prompts share the prefix %q:\n  %.60q\n  %.60q", word, other, p.Prompt)
		}
		first[word] = p.Prompt
	}
	if want := 2 + 2*8; sent != want || len(recs) != want {
		t.Errorf("%d prompts sent, %d records, want %d", sent, len(recs), want)
	}
	for _, r := range recs {
		if r.CachedTokens != nil && *r.CachedTokens > 0 {
			t.Errorf("request %d at level %s: %d cached prompt tokens", r.Seq, r.Level, *r.CachedTokens)
		}
	}
}
