package orchestrator_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/llamatest"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestLlamaCppCampaign runs `bakeoff run` on a campaign of engine: llamacpp
// scenarios against a server speaking llama.cpp's dialect (this test
// binary, as llamatest.Main): its own launcher flags, its health, a sweep
// that erases the slots before every level, the accept length from each
// response's timings, and the cache notes in the verdict.
func TestLlamaCppCampaign(t *testing.T) {
	w := newWorld(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	slots := filepath.Join(w.root, "slots")
	scenarios := map[string]string{
		"llama": fmt.Sprintf("engine: llamacpp\nmodel: /models/q.gguf\nenv:\n  %s: \"1\"\nargs:\n  parallel: 4\n  slot-save-path: %s\n  cache-ram: 0\n",
			llamatest.Env, slots),
		"llama-draft": "extends: llama\nargs:\n  model-draft: /models/d.gguf\n  spec-type: draft-simple\n",
		// Without slot-save-path llama-server refuses the erase: the notes must say so.
		"llama-nosave": "extends: llama\nargs:\n  slot-save-path: null\n",
	}
	for name, body := range scenarios {
		if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`campaign: llama
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
  concurrency: [1, 4]
  requests: 8
  max_tokens: 16
  warmup: 1
  endpoint: completions
baseline: llama
scenarios: [llama, llama-draft, llama-nosave]
rounds: 1
`, self, w.port)
	w.config = filepath.Join(w.root, "configs", "llama.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := w.bakeoff("run", w.config, "--out", filepath.Join(w.root, "run")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	run := readSummary(t, filepath.Join(w.root, "run"))
	for _, name := range []string{"llama", "llama-draft", "llama-nosave"} {
		s := scenarioResult(t, run, name)
		if s.Status != results.StatusOK {
			t.Fatalf("%s: %s %s\n%s", name, s.Status, s.Reason, text)
		}
		if s.EngineVersion != "b0000-llamatest" {
			t.Errorf("%s: engine version %q, want /props build_info", name, s.EngineVersion)
		}
		for _, l := range s.Levels {
			spec := name == "llama-draft"
			if (l.AcceptLength != nil) != spec || spec && *l.AcceptLength != 2 {
				t.Errorf("%s C=%d: accept length %v", name, l.Level, l.AcceptLength)
			}
			if name == "llama-nosave" {
				if l.CacheReset != "" || !strings.Contains(l.CacheResetNote, "slot-save-path") {
					t.Errorf("%s C=%d: reset %q, note %q", name, l.Level, l.CacheReset, l.CacheResetNote)
				}
			} else if l.CacheReset != "POST /slots/{0..3}?action=erase" {
				t.Errorf("%s C=%d: reset %q, note %q", name, l.Level, l.CacheReset, l.CacheResetNote)
			}
		}
		if _, err := os.Stat(filepath.Join(w.root, "run", name, "round-1", results.MetricsDir, "props.json")); err != nil {
			t.Errorf("%s: the /props answer was not kept: %v", name, err)
		}
		recs := readRecords(t, filepath.Join(w.root, "run", name, "round-1", results.RequestsFile))
		for _, r := range recs {
			if r.CachedTokens == nil {
				t.Fatalf("%s: a record without cached_tokens: %+v", name, r)
			}
		}
	}
	for _, want := range []string{
		"llama: the prefix cache was cleared before every level (POST /slots/{0..3}?action=erase)",
		"llama-nosave: the prefix cache was not cleared before C=1, C=4: no prefix-cache reset: POST /slots/0?action=erase: status 501",
		"llama: prefix-cache hit rate (cached of prompt tokens) C=1 0.0%, C=4 0.0%",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the run's output does not say %q:\n%s", want, text)
		}
	}
}

func readRecords(t *testing.T, path string) []measure.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []measure.Record
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r measure.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
