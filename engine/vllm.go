package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// vLLM (github vllm-project/vllm). Sources: the reset route in
// vllm/frontend/entrypoints/serve/dev/cache/api_router.py (earlier
// vllm/entrypoints/serve/cache/api_router.py; mounted only when
// VLLM_SERVER_DEV_MODE is set), vllm/config/vllm.py (the per-request metrics
// refusal), vllm/config/speculative.py, and the pull requests docs/ENGINES.md
// names for each fact, with the versions it holds for.

// vLLM's speculative-decoding counters and the accept-length source.
const (
	vllmAcceptedTokens = "vllm:spec_decode_num_accepted_tokens_total"
	vllmDrafts         = "vllm:spec_decode_num_drafts_total"

	SourceVLLMCounters = "vllm:spec_decode counters, delta over the level: 1 + accepted/drafts"
)

// VLLMDevMode is the variable that mounts vLLM's /reset_prefix_cache.
const VLLMDevMode = "VLLM_SERVER_DEV_MODE"

var vllm = &Profile{
	Name:     VLLM,
	Title:    "vLLM",
	Launcher: []string{"vllm", "serve"},
	Help:     &HelpCall{Args: []string{"--help=all"}, Format: HelpArgparse, Underscores: true}, // every group, not the summary
	Fixed: func(model, host string, port int) []string {
		return []string{model, "--host", host, "--port", strconv.Itoa(port)}
	},
	Reserved:   map[string]string{"model": "model", "host": "the launcher (127.0.0.1)", "port": "engine.port"},
	HealthPath: "/health", // 200 with an empty body once up; no token is generated
	ReadyLine:  "Application startup complete.",
	Fatal: append(pythonFatal[:len(pythonFatal):len(pythonFatal)],
		// The API process's last words when the engine core process died.
		"Engine core initialization failed",
	),
	Info:   &InfoCall{Path: "/version", File: "version.json", Parse: parseVersion},
	Accept: vllmAccept,
	Server: vllmServer,
	// With --per-request-spec-decode-metrics (PR #48915) the final usage
	// chunk carries metrics.speculative_decoding; vllmCheck asks for it.
	ResponseAccept: SourceVLLMResponseMetrics,
	Reset:          vllmReset,
	// /tokenize, and token-id prompts on /v1/completions.
	TokenizeCall: vllmTokenize, TokenPrompts: true,
	Speculative: func(a Args) bool { return argSet(a, "speculative-config") },
	Check:       vllmCheck,
	// vllm/config/speculative.py's num_speculative_tokens_per_batch_size:
	// "(range_start, range_end, num_speculative_tokens) with an inclusive
	// batch-size range", K = 0 for no drafting (read by the V1 scheduler's
	// build_dynamic_sd_schedule_lookup). disable_by_batch_size, which this
	// used to name, did nothing once the V0 engine went (v0.10.0) and was
	// removed by PR #35060 (2026-02). K stays the scenario's own
	// num_speculative_tokens, and the last range ends at its max-num-seqs.
	SpecOff: &SpecOff{Key: "num_speculative_tokens_per_batch_size", Min: 1, Since: "vLLM's dynamic speculative decoding (SpeculativeConfig.num_speculative_tokens_per_batch_size)",
		Setting: func(n int) string {
			return fmt.Sprintf(`--speculative-config '{..., "num_speculative_tokens_per_batch_size": [[1, %d, K], [%d, max_num_seqs, 0]]}'`, n, n+1)
		}},
}

func init() { register(vllm) }

// parseVersion reads {"version": "..."}.
func parseVersion(body []byte) Info {
	var v struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(body, &v) != nil {
		return Info{}
	}
	return Info{Version: v.Version}
}

// vllmAccept is the mean acceptance length over the level from the
// counters' deltas: 1 + Δaccepted / Δdrafts (the 1 is the bonus token).
func vllmAccept(s Scrapes) (float64, string) {
	if s.Before == nil || s.After == nil {
		return 0, ""
	}
	dd := s.After[vllmDrafts] - s.Before[vllmDrafts]
	da := s.After[vllmAcceptedTokens] - s.Before[vllmAcceptedTokens]
	if dd > 0 && da >= 0 {
		return 1 + da/dd, SourceVLLMCounters
	}
	return 0, ""
}

// vllmReset resets the prefix cache. Current builds answer 200 {"success":
// bool}, false "while blocks are still held, e.g. by running requests or
// in-flight async KV offload transfers; callers may retry"
// (vllm/frontend/entrypoints/serve/dev/cache/api_router.py, commit 055e47c2);
// earlier builds answered a bare 200 whether or not the reset happened
// (PR #12284: "we currently always return 200"), which is all bakeoff can
// read from them. docs/ENGINES.md gives the versions.
func vllmReset(ctx context.Context, c *http.Client, base, apiKey string) (string, error) {
	const path = "/reset_prefix_cache"
	err := postReset(ctx, c, base, path, apiKey, map[int]string{
		http.StatusNotFound: "the route exists only when the server runs with " + VLLMDevMode + "=1",
	}, vllmResetRefused)
	if err != nil {
		return "", err
	}
	return "POST " + path, nil
}

// vllmResetRefused reads the reset's answer: "" when it reset (or said
// nothing, as builds before v0.26.0 do), else why not.
func vllmResetRefused(body []byte) string {
	var r struct {
		Success *bool `json:"success"`
	}
	if json.Unmarshal(body, &r) != nil || r.Success == nil || *r.Success {
		return ""
	}
	return "the server did not reset its prefix cache (success: false: blocks still held by running requests or KV offload transfers)"
}

func vllmCheck(s Setup) []Warning {
	var out []Warning
	// vllm/config/vllm.py raises at start: "--per-request-spec-decode-metrics
	// requires speculative decoding to be enabled (via --speculative-config)."
	if v, ok := s.Args.ArgValue(VLLMPerRequestSpecFlag); ok && v != "none" && !argSet(s.Args, "speculative-config") {
		out = append(out, Warning{Arg: VLLMPerRequestSpecFlag, Refuse: true, Text: fmt.Sprintf(
			"scenario %s: vLLM refuses to start with %s and no speculative-config (\"requires speculative decoding to be enabled\"); leave it out of scenarios that do not speculate",
			s.Scenario, VLLMPerRequestSpecFlag)})
	}
	if n, ok := argInt(s.Args, "max-num-seqs"); ok && n < s.MaxLevel {
		out = append(out, Warning{Arg: "max-num-seqs", Text: fmt.Sprintf(
			"scenario %s: vLLM runs at most max-num-seqs=%d sequences at once and the sweep goes to %d: the levels above it measure queueing; set it to at least %d (the same in every scenario)",
			s.Scenario, n, s.MaxLevel, s.MaxLevel)})
	}
	if argSet(s.Args, "speculative-config") {
		if v, ok := s.Args.ArgValue(VLLMPerRequestSpecFlag); !ok || v == "" || v == "none" {
			out = append(out, Warning{Arg: "speculative-config", Text: fmt.Sprintf(
				"scenario %s: without %s summary (vLLM builds with PR #48915) responses carry no acceptance of their own, and the accept length falls back to the server's counters over each whole level; set it",
				s.Scenario, VLLMPerRequestSpecFlag)})
		}
	}
	if v, ok := s.Env(VLLMDevMode); (!ok || !isOn(v)) && !s.UniquePrompts {
		out = append(out, Warning{Text: fmt.Sprintf(
			"scenario %s: without %s=1 vLLM has no /reset_prefix_cache, so prompts cached by one level serve the next; set it in env, or set sweep.unique_prompts: true",
			s.Scenario, VLLMDevMode)})
	}
	return out
}
