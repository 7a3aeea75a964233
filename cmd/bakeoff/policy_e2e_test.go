package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/policy"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// TestPolicyCheckOverASimRun checks a written serving policy end to end:
// "serve EAGLE-3 with 3 steps up to C=1, speculation off from C=32",
// written as SGLang's adaptive speculative decoding (package policy), is
// raced on `bakeoff sim` against the two fixed configurations it switches
// between, the speculative one listed as a point of its space. The policy's
// server must run the adaptive bands, and the report must say, level by
// level, what the race found of it: on a quiet machine, level with the
// 3-step chain at C=1 (the sim's drafter accepts 0.8 at each position) and
// behind the baseline at C=32, where SGLang's band of 0 steps still runs
// the draft extend (docs/SIM.md); on a loaded one, whatever the race could
// tell, stated consistently with it.
func TestPolicyCheckOverASimRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign")
	}
	bin, err := simBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := campaignWriter(t, dir)
	write("scenarios/base.yaml", "name: base\nengine: sglang\nmodel: /models/test\nargs:\n  tp-size: 8\n")
	write("scenarios/chain.yaml", `name: chain
extends: base
args:
  speculative-algorithm: EAGLE3
  speculative-draft-model-path: /models/draft
  speculative-eagle-topk: 1
space:
  args:
    speculative-num-steps: [1, 3]
`)
	chain := policy.Config{Name: "chain.steps3", Engine: "sglang", Model: "/models/test", Args: []policy.Arg{
		{Key: "speculative-algorithm", Values: []string{"EAGLE3"}},
		{Key: "speculative-draft-model-path", Values: []string{"/models/draft"}},
		{Key: "speculative-eagle-topk", Values: []string{"1"}},
		{Key: "speculative-num-steps", Values: []string{"3"}},
		{Key: "tp-size", Values: []string{"8"}},
	}}
	base := policy.Config{Name: "base", Engine: "sglang", Model: "/models/test", Args: []policy.Arg{{Key: "tp-size", Values: []string{"8"}}}}
	w := policy.Write([]policy.Band{{Config: "chain.steps3", From: "C=1", To: "C=1"}, {Config: "base", From: "C=32", To: "C=32"}},
		map[string]policy.Config{"chain.steps3": chain, "base": base})
	if w == nil || w.Setting == nil {
		t.Fatalf("the policy is not one setting: %+v", w)
	}
	config := filepath.Join(dir, "serving-policy", w.Setting.ConfigFile)
	data, err := w.Setting.ScenarioYAML(config, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
		t.Fatal(err)
	}
	write("serving-policy/"+w.Setting.ConfigFile, w.Setting.Config)
	write("serving-policy/policy.yaml", string(data))
	cfg := filepath.Join(dir, "configs", "check.yaml")
	write("configs/check.yaml", fmt.Sprintf(`campaign: check
host: local
gpu: none
engine:
  command: ["{bakeoff}", "sim", "--sim-speed", "20", "--sim-load-time", "10s", "--sim-launch-sigma", "0.01", "--sim-draft-accept", "0.8"]
  # SM100: the seeds' SM120 host verifies too slowly for any drafter to
  # win at C=1 (docs/SIM.md).
  env: {BAKEOFF_SIM_COMPUTE_CAP: "10.0"}
  port: %d
  health_timeout: 1m
  poll_interval: 100ms
  stop_grace: 5s
sweep:
  concurrency: [1, 32]
  requests: 32
  max_tokens: 96
  warmup: 1
question: select
select: {first_stage: 2}
equivalence_margin: 4%%
baseline: base
scenarios: [base, chain.steps3, ../serving-policy/policy.yaml]
rounds: {min: 2, max: 3}
`, testbin.FreePort(t)))
	sc := simCampaign{bin: bin, dir: dir, cfg: cfg, root: filepath.Join(dir, "results")}
	out := sc.run(t)
	runDir := sc.onlyRun(t, "check")
	logs, _ := filepath.Glob(filepath.Join(runDir, policy.ScenarioName, "*", results.ServerLog))
	if len(logs) == 0 {
		logs, _ = filepath.Glob(filepath.Join(runDir, policy.ScenarioName, results.ServerLog))
	}
	if len(logs) == 0 {
		t.Fatalf("no server log of the policy's launches under %s", runDir)
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil || !strings.Contains(string(b), "AdaptiveSpeculativeParams initialized: steps=3, candidate_steps=[3]") {
			t.Errorf("%s does not show the adaptive bands (%v)", l, err)
		}
	}
	run, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, c := v.Selection, v.PolicyCheck
	if res == nil || !res.Done || c == nil || len(c.Levels) != 2 {
		t.Fatalf("the race %+v, the check %+v", res, c)
	}
	if v.Policy != nil {
		t.Errorf("a race that checks a policy wrote another: %+v", v.Policy)
	}
	// The end folds its lines to the terminal's width.
	if !strings.Contains(strings.Join(strings.Fields(string(out)), " "), c.Sentence()) {
		t.Errorf("the end does not say %q:\n%s", c.Sentence(), out)
	}
	// Each level's outcome is the race's own account of the policy.
	for i, l := range c.Levels {
		lr := res.Levels[i]
		ruledOut := slices.ContainsFunc(res.Eliminations, func(e selection.Elimination) bool {
			return e.Config == policy.ScenarioName && e.Level == l.Level
		})
		switch l.Outcome {
		case "best":
			if lr.Selected != policy.ScenarioName {
				t.Errorf("%s: best, but the race selected %s", l.Level, lr.Selected)
			}
		case "short":
			if !ruledOut || l.GapPct < c.DeltaPct {
				t.Errorf("%s: short, but the race did not rule the policy out %.0f%% behind (%+v)", l.Level, c.DeltaPct, l)
			}
		case "within":
			near := slices.Contains(lr.Near, policy.ScenarioName)
			if lr.Selected == policy.ScenarioName || (!near && !(ruledOut && l.GapPct < c.DeltaPct)) {
				t.Errorf("%s: within, but the race has it neither near the best nor ruled out within %.0f%% (%+v)", l.Level, c.DeltaPct, l)
			}
		case "open":
			if ruledOut || lr.Selected == policy.ScenarioName || !lr.Truncated {
				t.Errorf("%s: open, but the race ruled it out, selected it or decided the level (%+v)", l.Level, lr)
			}
		default:
			t.Errorf("%s: outcome %q", l.Level, l.Outcome)
		}
		t.Logf("%s: %s (%s selected)", l.Level, l.Outcome, lr.Selected)
	}
}
