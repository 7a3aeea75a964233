package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// vLLM (github vllm-project/vllm). Sources: shared/facts/engines.md; the
// reset route checked in vllm/entrypoints/serve/cache/api_router.py (docs.vllm.ai
// API reference: mounted only when VLLM_SERVER_DEV_MODE is set).
// docs/ENGINES.md lists each fact's source.

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
	// vllm/config/speculative.py: "Disable speculative decoding for new
	// incoming requests when the number of enqueued requests is larger than
	// this value" (Field ge=2); the V0 engine's flag was
	// --speculative-disable-by-batch-size (PR #4592).
	SpecOff: &SpecOff{Key: "disable_by_batch_size", Min: 2, Since: "vLLM V1 SpeculativeConfig (earlier: --speculative-disable-by-batch-size, PR #4592)",
		Setting: func(n int) string {
			return fmt.Sprintf(`--speculative-config '{..., "disable_by_batch_size": %d}'`, n)
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

func vllmReset(ctx context.Context, c *http.Client, base, apiKey string) (string, error) {
	const path = "/reset_prefix_cache"
	err := postReset(ctx, c, base, path, apiKey, map[int]string{
		http.StatusNotFound: "the route exists only when the server runs with " + VLLMDevMode + "=1",
	})
	if err != nil {
		return "", err
	}
	return "POST " + path, nil
}

func vllmCheck(s Setup) []Warning {
	var out []Warning
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
