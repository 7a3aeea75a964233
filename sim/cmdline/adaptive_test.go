package cmdline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestResolveAdaptive: --speculative-adaptive as SGLang's speculative hook
// resolves it: kept with its plan, dropped with SGLang's warning, or a
// startup error in SGLang's words.
func TestResolveAdaptive(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bands := file("bands.json", `{"ema_alpha": 0.5, "1": {"candidate_steps": [3]}, "16": {"candidate_steps": [1, 2], "ema_alpha": 0.1}, "64": {"candidate_steps": [0]}}`)
	tput := file("tput.json", `{"strategy": "throughput_aware", "1": {"candidate_steps": [1, 3]}}`)
	const eagle = "--speculative-algorithm EAGLE3 --speculative-adaptive "
	tests := []struct {
		name         string
		args         string
		steps, draft int
		candidates   []int
		notice, exc  string
		message      string
		checkPlan    func(t *testing.T, p *AdaptivePlan)
	}{
		{name: "SGLang's default config, steps its middle candidate", args: eagle,
			steps: 3, draft: 4, candidates: []int{0, 1, 3, 5, 7},
			checkPlan: func(t *testing.T, p *AdaptivePlan) {
				if p.Strategy != "ema" || len(p.Slots) != 4 || p.Slots[3].MinBatch != 64 || !slices.Equal(p.Slots[3].Candidates, []int{0}) ||
					p.Slots[0].DownHysteresis != -0.25 || p.Slots[1].DownHysteresis != 0 || p.Slots[0].EMAAlpha != 0.2 || p.Slots[0].WarmupBatches != 10 {
					t.Errorf("plan %+v", p)
				}
			}},
		{name: "a config file: knobs from the entry over the top level", args: eagle + "--speculative-adaptive-config " + bands + " --speculative-num-steps 1",
			steps: 1, draft: 2, candidates: []int{0, 1, 2, 3},
			checkPlan: func(t *testing.T, p *AdaptivePlan) {
				if p.Slots[0].EMAAlpha != 0.5 || p.Slots[1].EMAAlpha != 0.1 || p.Slots[1].MinBatch != 16 {
					t.Errorf("slots %+v", p.Slots)
				}
			}},
		{name: "throughput-aware strategy", args: eagle + "--speculative-adaptive-config " + tput,
			steps: 3, draft: 4, candidates: []int{1, 3},
			checkPlan: func(t *testing.T, p *AdaptivePlan) {
				if p.Strategy != "throughput_aware" {
					t.Errorf("strategy %q", p.Strategy)
				}
			}},
		{name: "NEXTN is EAGLE's alias", args: "--speculative-algorithm NEXTN --speculative-adaptive", steps: 3, draft: 4, candidates: []int{0, 1, 3, 5, 7}},
		{name: "topk 4 falls back", args: eagle + "--speculative-eagle-topk 4 --speculative-num-draft-tokens 8", steps: 3, draft: 8,
			notice: "speculative_adaptive disabled: speculative_eagle_topk=4 (only topk=1 is supported). Falling back to static speculative params."},
		{name: "n-gram falls back", args: "--speculative-algorithm ngram --speculative-adaptive", steps: 3, draft: 4,
			notice: "speculative_adaptive disabled: speculative_algorithm=NGRAM (only EAGLE/EAGLE3 are supported). Falling back to static speculative params."},
		{name: "no speculation falls back", args: "--speculative-adaptive", steps: 3, draft: 1,
			notice: "speculative_adaptive disabled: speculative_algorithm=None (only EAGLE/EAGLE3 are supported). Falling back to static speculative params."},
		{name: "DP attention falls back", args: eagle + "--enable-dp-attention", steps: 3, draft: 4,
			notice: "speculative_adaptive disabled: attention DP is not supported (adaptive tier decisions are not synchronized across DP ranks). Falling back to static speculative params."},
		{name: "steps outside the candidates", args: eagle + "--speculative-num-steps 2", steps: 2, draft: 3,
			exc: "ValueError", message: "--speculative-num-steps=2 is not in the adaptive config candidate_steps [0, 1, 3, 5, 7]. Pass one of those values."},
		{name: "a missing file", args: eagle + "--speculative-adaptive-config /nonexistent/adaptive.json", steps: 3, draft: 4,
			exc: "FileNotFoundError", message: "[Errno 2] No such file or directory: '/nonexistent/adaptive.json'"},
		{name: "not an object", args: eagle + "--speculative-adaptive-config " + file("list.json", `[1, 3]`), steps: 3, draft: 4,
			exc: "ValueError", message: "speculative adaptive config must be a JSON object, got list"},
		{name: "an unknown strategy", args: eagle + "--speculative-adaptive-config " + file("strategy.json", `{"strategy": "bandit", "1": {"candidate_steps": [3]}}`), steps: 3, draft: 4,
			exc: "ValueError", message: "speculative adaptive config 'strategy' must be 'ema' or 'throughput_aware', got 'bandit'"},
		{name: "a negative candidate", args: eagle + "--speculative-adaptive-config " + file("neg.json", `{"8": {"candidate_steps": [1, -2]}}`), steps: 3, draft: 4,
			exc: "ValueError", message: "BS 8: candidate_steps must be a list of non-negative ints, got [1, -2]"},
		{name: "a fractional candidate", args: eagle + "--speculative-adaptive-config " + file("frac.json", `{"8": {"candidate_steps": [1.0]}}`), steps: 3, draft: 4,
			exc: "ValueError", message: "BS 8: candidate_steps must be a list of non-negative ints, got [1.0]"},
		{name: "no band", args: eagle + "--speculative-adaptive-config " + file("nokey.json", `{"ema_alpha": 0.3, "steps": [1]}`), steps: 3, draft: 4,
			exc: "ValueError", message: `speculative_adaptive_config must contain at least one integer-string BS key, e.g. {"1": {"candidate_steps": [1,3,7]}}. Got keys: ['ema_alpha', 'steps']`},
		{name: "throughput-aware needs a step in every band", args: eagle + "--speculative-adaptive-config " + file("tzero.json", `{"strategy": "throughput_aware", "1": {"candidate_steps": [0, 3]}}`), steps: 3, draft: 4,
			exc: "ValueError", message: "throughput-aware config key '1': candidate_steps must be a non-empty list of positive ints, got [0, 3]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseArgs(strings.Fields(tt.args), func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			exc, msg := c.StartupError()
			if exc != tt.exc || msg != tt.message {
				t.Errorf("startup error %s: %s\nwant %s: %s", exc, msg, tt.exc, tt.message)
			}
			if c.SpecSteps != tt.steps || c.DraftTokens() != tt.draft {
				t.Errorf("steps %d, draft tokens %d; want %d, %d", c.SpecSteps, c.DraftTokens(), tt.steps, tt.draft)
			}
			var notices []string
			if tt.notice != "" {
				notices = []string{tt.notice}
			}
			if !slices.Equal(c.Notices, notices) {
				t.Errorf("notices %q, want %q", c.Notices, notices)
			}
			if (c.Adaptive != nil) != (tt.candidates != nil) {
				t.Fatalf("adaptive %v, want candidates %v", c.Adaptive, tt.candidates)
			}
			if c.Adaptive == nil {
				return
			}
			if got := c.Adaptive.Candidates(); !slices.Equal(got, tt.candidates) {
				t.Errorf("candidates %v, want %v", got, tt.candidates)
			}
			if tt.checkPlan != nil {
				tt.checkPlan(t, c.Adaptive)
			}
			if ServerArgs(c)["speculative_adaptive"] != true {
				t.Errorf("server args speculative_adaptive %v", ServerArgs(c)["speculative_adaptive"])
			}
		})
	}
}
