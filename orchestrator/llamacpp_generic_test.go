package orchestrator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/llamatest"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// genericLlamaScenario is a llama-server (this test binary, as llamatest)
// launched whole through engine: generic, the way the docs offer any
// engine bakeoff has no profile for; extra is more of its file. Its tokens
// come 5 ms apart, not llamatest's 1 ms: on a loaded machine a sleep runs
// late by a scheduler's slice, which at 1 ms a token swung a round's speed
// by half and left a true factor of two undecided after eight rounds.
func genericLlamaScenario(t *testing.T, w *world, name, flags, extra string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("engine: generic\nmodel: /models/q.gguf\nenv:\n  %s: \"1\"\n  %s: 5ms\nlaunch: [%q, --model, /models/q.gguf, --port, \"{port}\", --parallel, \"8\"%s]\n%s",
		llamatest.Env, llamatest.TokenGapEnv, self, flags, extra)
	if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runGenericLlama runs a sequential campaign (rounds 3 to 8, C=1 and C=4:
// four streams, so that a loaded machine's client still keeps pace with a
// server this fast) of the two scenarios and judges it as the report does.
func runGenericLlama(t *testing.T, w *world) (*verdict.Verdict, string) {
	t.Helper()
	cfg := fmt.Sprintf(`campaign: llama-generic
host: local
gpu: none
engine:
  port: %d
  health_timeout: 30s
  poll_interval: 100ms
  stop_grace: 5s
sweep:
  concurrency: [1, 4]
  requests: 16
  max_tokens: 32
  warmup: 1
  endpoint: completions
baseline: llama
scenarios: [llama, llama-spec]
rounds: {min: 3, max: 8}
`, w.port)
	w.config = filepath.Join(w.root, "configs", "llama-generic.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(w.root, "run")
	combined, err := w.bakeoff("run", w.config, "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, combined)
	}
	run := readSummary(t, out)
	for _, sr := range run.Summary.Scenarios {
		if sr.Status != results.StatusOK {
			t.Fatalf("%s round %d: %s %s\n%s", sr.Name, sr.RoundOf(), sr.Status, sr.Reason, combined)
		}
		// The host's load around the sweep, read from /proc/loadavg.
		if h := sr.HostState; h == nil || h.Before == nil || h.After == nil {
			t.Errorf("%s round %d: host state %+v, want a reading before and after the sweep", sr.Name, sr.RoundOf(), h)
		}
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range v.Crossovers {
		t.Log(x.Sentence)
	}
	t.Log(verdict.Cost(v, run).Sentence)
	return v, string(combined)
}

// TestGenericLlamaDecides: a real llama-server dialect through engine:
// generic, baseline against a draft-model side that streams twice as fast,
// with no cache reset on either side. The cache left warm alike on both
// sides is a note, not a doubt, and the server's generation counter (which
// llama-server adds to only when a request ends) is not held against the
// client's tokens for an engine whose counters bakeoff does not know: C=1
// is decided, and the answer says what the table says.
func TestGenericLlamaDecides(t *testing.T) {
	w := newWorld(t)
	genericLlamaScenario(t, w, "llama", "", "")
	genericLlamaScenario(t, w, "llama-spec", ", --model-draft, /models/d.gguf", "")
	v, out := runGenericLlama(t, w)
	c1 := v.Cell(measure.ConcurrencyLevel(1), "llama-spec")
	if c1 == nil || c1.Outcome != verdict.OutcomeFaster {
		t.Fatalf("llama-spec at C=1: %+v, want faster\n%s", c1, out)
	}
	for _, row := range v.Rows {
		for _, c := range row.Cells {
			for _, d := range c.Doubts {
				// A loaded machine's client may fall behind eight fast
				// streams (a pace doubt, which more rounds can clear);
				// the cache and the counter must doubt nothing here.
				if d.Kind != verdict.DoubtPace {
					t.Errorf("%s at %s doubted: %+v", c.Scenario, measure.LevelName(row.Level), d)
				}
			}
		}
	}
	note := false
	for _, n := range v.Notes {
		if n.Check == verdict.CheckCache && strings.Contains(n.Text, "a note, not a doubt") {
			note = note || n.Severity == verdict.SeverityInfo
		}
	}
	if !note {
		t.Errorf("no note says the warm cache is a note, not a doubt; notes: %+v", v.Notes)
	}
	if strings.Contains(out, "could be detected") || strings.Contains(out, "cache differs") || strings.Contains(out, "token counts disagree") {
		t.Errorf("the answer reads as undecided, or doubted for the cache or the counter:\n%s", out)
	}
	if !regexp.MustCompile(`llama-spec: (wins at every level|\+[0-9.]+% at C=1 )`).MatchString(out) {
		t.Errorf("the answer does not say llama-spec wins at C=1:\n%s", out)
	}
}

// TestGenericLlamaResetOneSide: the same campaign with a cache reset on the
// baseline's side only (an HTTP call the campaign names, llama-server's slot
// erase): the cache treated the sides differently, so every comparison is
// doubted, with the reason; as no later round can change it, the variant
// stops at its first look, and the answer says doubted, not inconclusive.
func TestGenericLlamaResetOneSide(t *testing.T) {
	w := newWorld(t)
	slots := filepath.Join(w.root, "slots")
	if err := os.MkdirAll(slots, 0o755); err != nil {
		t.Fatal(err)
	}
	genericLlamaScenario(t, w, "llama", ", --slot-save-path, "+slots,
		"prefix_cache:\n  reset: POST /slots/0?action=erase\n")
	genericLlamaScenario(t, w, "llama-spec", ", --model-draft, /models/d.gguf", "")
	v, out := runGenericLlama(t, w)
	for _, c := range []int{1, 4} {
		cell := v.Cell(measure.ConcurrencyLevel(c), "llama-spec")
		cache := cell != nil && slices.ContainsFunc(cell.Doubts, func(d verdict.Doubt) bool {
			return d.Kind == verdict.DoubtCache && strings.Contains(d.Text, "cleared before the level for llama but not for llama-spec")
		})
		if cell == nil || cell.Outcome != verdict.OutcomeDoubted || !cache {
			t.Fatalf("llama-spec at C=%d: %+v, want doubted for the cache\n%s", c, cell, out)
		}
	}
	vs := v.Sequential.Variants[0]
	if !vs.Stopped || vs.StoppedAfter != 3 || !strings.Contains(vs.Reason, "no more rounds can clear") {
		t.Errorf("llama-spec: %+v, want stopped after round 3 for a lasting doubt\n%s", vs, out)
	}
	for _, want := range []string{
		"llama-spec: doubted at every level (C=1 to C=4), not decided: the prefix cache was cleared before the level for llama but not for llama-spec",
		"POST /slots/0?action=erase (prefix_cache.reset)",
	} {
		if !strings.Contains(out+w.detail(filepath.Join(w.root, "run")), want) {
			t.Errorf("the run's output does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "could be detected") {
		t.Errorf("the answer says nothing could be detected where the table says doubted:\n%s", out)
	}
}
