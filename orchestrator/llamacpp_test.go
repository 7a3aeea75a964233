package orchestrator_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	slots := filepath.Join(w.root, "slots")
	scenarios := map[string]string{
		"llama": fmt.Sprintf("engine: llamacpp\nmodel: /models/q.gguf\nenv:\n  %s: \"1\"\nargs:\n  parallel: 4\n  slot-save-path: %s\n  cache-ram: 0\n",
			llamatest.Env, slots),
		"llama-draft": "extends: llama\nargs:\n  model-draft: /models/d.gguf\n  spec-type: draft-simple\n",
		// Without slot-save-path llama-server refuses the erase: the notes must say so.
		"llama-nosave": "extends: llama\nargs:\n  slot-save-path: null\n",
	}
	writeLlamaCampaign(t, w, scenarios, "llama", []string{"llama", "llama-draft", "llama-nosave"})
	out, err := w.bakeoff("run", w.config, "--out", filepath.Join(w.root, "run")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out) + w.detail(filepath.Join(w.root, "run"))
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
				t.Errorf("%s %s: accept length %v", name, l.Level, l.AcceptLength)
			}
			if name == "llama-nosave" {
				if l.CacheReset != "" || !strings.Contains(l.CacheResetNote, "slot-save-path") {
					t.Errorf("%s %s: reset %q, note %q", name, l.Level, l.CacheReset, l.CacheResetNote)
				}
			} else if l.CacheReset != "POST /slots/{0..3}?action=erase" {
				t.Errorf("%s %s: reset %q, note %q", name, l.Level, l.CacheReset, l.CacheResetNote)
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

// TestLlamaCppFailedLaunch: llama-server refusing an argument prints the
// error, then the argument's usage and a hint; the failure's reason, the
// progress line and the end-of-run summary name the error, not the hint.
func TestLlamaCppFailedLaunch(t *testing.T) {
	w := newWorld(t)
	scenarios := map[string]string{
		"bad": fmt.Sprintf("engine: llamacpp\nmodel: /models/q.gguf\nenv:\n  %s: \"1\"\nargs:\n  parallel: many\n", llamatest.Env),
	}
	writeLlamaCampaign(t, w, scenarios, "bad", []string{"bad"})
	out, err := w.bakeoff("run", w.config, "--out", filepath.Join(w.root, "run")).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, out)
	}
	const cause = `error while handling argument "--parallel": stoi`
	s := scenarioResult(t, readSummary(t, filepath.Join(w.root, "run")), "bad")
	if s.Status != results.StatusFailed || s.FailedPhase != "ready" {
		t.Fatalf("bad: %s at %q, want failed at ready: %s", s.Status, s.FailedPhase, s.Reason)
	}
	if first, _, _ := strings.Cut(s.Reason, "\n"); !strings.Contains(first, cause) {
		t.Errorf("the reason's first line %q does not name the error %q; reason:\n%s", first, cause, s.Reason)
	}
	// The fatal line or the process's exit, whichever is seen first, ends
	// the wait; either way the error follows on the same line.
	for _, want := range []string{"bad] failed at ready: ", "FAILED bad at ready: "} {
		re := regexp.MustCompile(regexp.QuoteMeta(want) + `server (failed|exited) while loading: ` + regexp.QuoteMeta(cause))
		if !re.Match(out) {
			t.Errorf("the run's output does not say %q, then the error:\n%s", want, out)
		}
	}
}

// writeLlamaCampaign writes the scenarios and a campaign of them whose
// launcher is this test binary standing in for llama-server (llamatest).
func writeLlamaCampaign(t *testing.T, w *world, scenarios map[string]string, baseline string, names []string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
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
baseline: %s
scenarios: [%s]
rounds: 1
`, self, w.port, baseline, strings.Join(names, ", "))
	w.config = filepath.Join(w.root, "configs", "llama.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
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
