package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SGLang (github sgl-project/sglang). Sources: python/sglang/srt/entrypoints/http_server.py
// (/server_info, /flush_cache and its timeout), python/sglang/srt/arg_groups/
// (speculative_hook.py, overrides.py, fields/exec_.py: the server arguments)
// and the pull requests docs/ENGINES.md names for each fact, with the
// versions it holds for.

// SGLangSpecMaxRunning is the batch cap SGLang applies to speculative
// decoding when --max-running-requests is unset ("Max running requests is
// reset to 48 for speculative decoding").
const SGLangSpecMaxRunning = 48

// SGLang's counters of generated tokens and of verify steps: over a level,
// the increase of the first over that of the second is the token-weighted
// accept length of the requests that finished in it.
const (
	sglangGenTokens   = "sglang:generation_tokens_total"
	sglangVerifyCalls = "sglang:spec_verify_calls_total"
)

var sglang = &Profile{
	Name:     SGLang,
	Title:    "SGLang",
	Launcher: []string{"{python}", "-m", "sglang.launch_server"},
	Help:     &HelpCall{Args: []string{"--help"}, Format: HelpArgparse},
	Fixed: func(model, host string, port int) []string {
		return []string{"--model-path", model, "--host", host, "--port", strconv.Itoa(port)}
	},
	Reserved:   map[string]string{"model-path": "model", "host": "the launcher (127.0.0.1)", "port": "engine.port"},
	HealthPath: "/health",
	// Logged once the warm-up request has been answered.
	ReadyLine: "The server is fired up and ready to roll!",
	Fatal: append(pythonFatal[:len(pythonFatal):len(pythonFatal)],
		"Scheduler hit an exception",
		"Rank 0 scheduler is dead",
		"Initialization failed",
		"Capture cuda graph failed",
		"NCCL error",
	),
	// /server_info is the call's name since late 2025; /get_server_info
	// stayed as a deprecated alias that logs a warning at every call (PR
	// #21463 moved SGLang's own callers off it in 2026-03) and is what
	// older builds have.
	Info:   &InfoCall{Path: "/server_info", Fallback: []string{"/get_server_info"}, File: "server_info.json", Parse: parseSGLangInfo},
	Accept: sglangAccept,
	Server: sglangServer,
	// PR #33518: with this field a speculative server adds each request's
	// verify steps, draft counts and histogram to its response (a chunk of
	// their own when streaming); a server without speculation, or a build
	// from before it, ignores the field.
	AcceptRequest:  map[string]any{"return_spec_tokens_details": true},
	ResponseAccept: SourceSGLangSpecDetails,
	Reset:          sglangReset,
	// /v1/tokenize, and token-id prompts on /v1/completions.
	TokenizeCall: sglangTokenize, TokenPrompts: true,
	Speculative: func(a Args) bool { return argSet(a, "speculative-algorithm") },
	Check:       sglangCheck,
}

func init() { register(sglang) }

// parseSGLangInfo reads /server_info (or /get_server_info): `version`, and
// internal_states[0].avg_spec_accept_length when speculative. That average
// is the scheduler's own running figure: over the server's life on builds
// that keep it, since the last /flush_cache on builds whose flush_cache
// resets spec_num_total_accepted_tokens. bakeoff flushes before every level,
// so it assumes neither and never reads it as a level's figure.
func parseSGLangInfo(body []byte) Info {
	var info struct {
		Version        string `json:"version"`
		InternalStates []struct {
			AvgSpecAcceptLength *float64 `json:"avg_spec_accept_length"`
		} `json:"internal_states"`
	}
	if json.Unmarshal(body, &info) != nil {
		return Info{}
	}
	out := Info{Version: info.Version}
	if len(info.InternalStates) > 0 {
		out.AcceptLength = info.InternalStates[0].AvgSpecAcceptLength
	}
	return out
}

// sglangAccept is the token-weighted accept length of the level from the
// increase of SGLang's counters: generated tokens over verify steps. Builds
// without sglang:spec_verify_calls_total (before PR #25689) give none: the
// spec_accept_length gauge averages the server's last 40 batches, whatever
// they were, and /server_info's average runs since the server's start or
// its last cache flush, depending on the build.
func sglangAccept(s Scrapes) (float64, string) {
	tokens, okT := increase(s, sglangGenTokens)
	steps, okS := increase(s, sglangVerifyCalls)
	if !okT || !okS || steps <= 0 {
		return 0, ""
	}
	return tokens / steps, SourceSGLangCounters
}

// SGLangFlushWait is how long /flush_cache?timeout= asks SGLang to wait
// for its scheduler to go idle before it flushes; it stays below the call's
// own timeout, so the answer arrives.
const SGLangFlushWait = 20 * time.Second

// sglangReset flushes the radix cache. SGLang refuses (400, http_server.py's
// flush_cache) while requests are running or waiting; with ?timeout=N (PR
// #21413, 2026-03) it waits up to N seconds for the scheduler to go idle and
// flushes then. A build that ignores the parameter refuses at once, and a
// build that timed out answers 400 too, so postReset still tries again after
// a pause.
func sglangReset(ctx context.Context, c *http.Client, base, apiKey string) (string, error) {
	path := fmt.Sprintf("/flush_cache?timeout=%g", SGLangFlushWait.Seconds())
	if err := postReset(ctx, c, base, path, apiKey, map[int]string{http.StatusNotFound: "this SGLang build has no /flush_cache"}, nil); err != nil {
		return "", err
	}
	return "POST " + path, nil
}

// SGLang's FlashInfer allreduce fusion switches (python/sglang/srt/arg_groups/
// fields/exec_.py): the backend, the older boolean that is now a deprecated
// alias of backend auto, and the switch that keeps it off.
const (
	sglangFusionBackend   = "flashinfer-allreduce-fusion-backend"
	sglangFusionOld       = "enable-flashinfer-allreduce-fusion"
	sglangFusionForcedOff = "enforce-disable-flashinfer-allreduce-fusion"
)

func sglangCheck(s Setup) []Warning {
	out := sglangFusionCheck(s)
	// speculative_hook.py: "SGLANG_ENABLE_SPEC_V2 has been removed:
	// speculative decoding always runs the V2 worker." A scenario that sets
	// it differs from its sibling only on builds from before that.
	if v, ok := s.Env("SGLANG_ENABLE_SPEC_V2"); ok {
		out = append(out, Warning{Env: "SGLANG_ENABLE_SPEC_V2", Text: fmt.Sprintf(
			"scenario %s: SGLANG_ENABLE_SPEC_V2=%s does nothing on current SGLang, which removed it and always runs speculative decoding on the V2 (overlap) worker; the synchronous path is disable-overlap-schedule",
			s.Scenario, v)})
	}
	if !argSet(s.Args, "speculative-algorithm") {
		return out
	}
	if _, ok := s.Args.ArgValue("max-running-requests"); !ok && s.MaxLevel > SGLangSpecMaxRunning {
		out = append(out, Warning{Arg: "speculative-algorithm", Text: fmt.Sprintf(
			"scenario %s: speculative SGLang caps running requests at %d unless max-running-requests is set, and the sweep goes to %d; set it (to the same value in every scenario)",
			s.Scenario, SGLangSpecMaxRunning, s.MaxLevel)})
	}
	topk, hasTopk := argInt(s.Args, "speculative-eagle-topk")
	steps, hasSteps := argInt(s.Args, "speculative-num-steps")
	draft, hasDraft := argInt(s.Args, "speculative-num-draft-tokens")
	if hasTopk && topk == 1 && hasSteps && hasDraft && draft != steps+1 {
		out = append(out, Warning{Arg: "speculative-num-draft-tokens", Text: fmt.Sprintf(
			"scenario %s: with speculative-eagle-topk 1 SGLang forces speculative-num-draft-tokens to num-steps+1 = %d, not %d",
			s.Scenario, steps+1, draft)})
	}
	return out
}

// sglangFusionCheck: current SGLang turns FlashInfer allreduce fusion on by
// itself for the models it supports (DeepSeek V3, Kimi K2.5, Qwen3 MoE, …)
// with TP > 1 on SM90 and SM10x GPUs (arg_groups/overrides.py,
// _flashinfer_allreduce_fusion_auto_enable), so a variant that only leaves
// out the baseline's fusion flag may run with fusion on; only the
// enforce-disable switch keeps it off. The old boolean now means backend auto, which refuses any other
// GPU ("FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs.").
func sglangFusionCheck(s Setup) []Warning {
	var out []Warning
	_, old := s.Args.ArgValue(sglangFusionOld)
	_, backend := s.Args.ArgValue(sglangFusionBackend)
	_, off := s.Args.ArgValue(sglangFusionForcedOff)
	if old {
		out = append(out, Warning{Arg: sglangFusionOld, Text: fmt.Sprintf(
			"scenario %s: %s is deprecated on current SGLang, which reads it as %s auto and then refuses to start on GPUs other than SM90 and SM10x (an RTX PRO 6000 is SM120); write %s: auto, and leave it out of campaigns on other GPUs",
			s.Scenario, sglangFusionOld, sglangFusionBackend, sglangFusionBackend)})
	}
	if b := s.BaselineArgs; b != nil && !old && !backend && !off {
		_, bOld := b.ArgValue(sglangFusionOld)
		_, bBackend := b.ArgValue(sglangFusionBackend)
		if bOld || bBackend {
			out = append(out, Warning{Text: fmt.Sprintf(
				"scenario %s: turns FlashInfer allreduce fusion off by leaving out the baseline's fusion flag, but current SGLang turns fusion on by itself on SM90 and SM10x GPUs for the models it supports (with tp > 1): this scenario may measure the baseline's configuration; set %s: true",
				s.Scenario, sglangFusionForcedOff)})
		}
	}
	return out
}

// argSet reports whether a flag is set to a non-empty value.
func argSet(a Args, key string) bool {
	v, ok := a.ArgValue(key)
	return ok && v != ""
}

func argInt(a Args, key string) (int, bool) {
	v, ok := a.ArgValue(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// isOn reads an environment switch the way Python engines do: empty, 0,
// false, no and off are off.
func isOn(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}
