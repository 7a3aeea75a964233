package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// SGLang (github sgl-project/sglang). Sources: python/sglang/srt/server_args.py
// and entrypoints/http_server.py via shared/facts/engines.md; /flush_cache
// checked in python/sglang/srt/mem_cache/flush_cache.py and NVIDIA AIPerf's
// "control hooks by server" page. docs/ENGINES.md lists each fact's source.

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
	Info:   &InfoCall{Path: "/get_server_info", File: "get_server_info.json", Parse: parseSGLangInfo},
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

// parseSGLangInfo reads /get_server_info: `version`, and
// internal_states[0].avg_spec_accept_length when speculative.
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
// they were, and /get_server_info's average runs over the server's life.
func sglangAccept(s Scrapes) (float64, string) {
	tokens, okT := increase(s, sglangGenTokens)
	steps, okS := increase(s, sglangVerifyCalls)
	if !okT || !okS || steps <= 0 {
		return 0, ""
	}
	return tokens / steps, SourceSGLangCounters
}

// sglangReset flushes the radix cache. SGLang refuses (400, http_server.py's
// flush_cache) while requests are running or waiting; postReset tries again
// after a pause.
func sglangReset(ctx context.Context, c *http.Client, base, apiKey string) (string, error) {
	const path = "/flush_cache"
	if err := postReset(ctx, c, base, path, apiKey, map[int]string{http.StatusNotFound: "this SGLang build has no /flush_cache"}); err != nil {
		return "", err
	}
	return "POST " + path, nil
}

func sglangCheck(s Setup) []Warning {
	if !argSet(s.Args, "speculative-algorithm") {
		return nil
	}
	var out []Warning
	if _, ok := s.Args.ArgValue("max-running-requests"); !ok && s.MaxLevel > SGLangSpecMaxRunning {
		out = append(out, Warning{Arg: "speculative-algorithm", Text: fmt.Sprintf(
			"scenario %s: speculative SGLang caps running requests at %d unless max-running-requests is set, and the sweep goes to %d; set it (to the same value in every scenario)",
			s.Scenario, SGLangSpecMaxRunning, s.MaxLevel)})
	}
	topk, hasTopk := argInt(s.Args, "speculative-eagle-topk")
	if v, ok := s.Env("SGLANG_ENABLE_SPEC_V2"); ok && isOn(v) && hasTopk && topk > 1 {
		out = append(out, Warning{Env: "SGLANG_ENABLE_SPEC_V2", Text: fmt.Sprintf(
			"scenario %s: SGLANG_ENABLE_SPEC_V2=%s needs speculative-eagle-topk 1, and it is %d", s.Scenario, v, topk)})
	}
	steps, hasSteps := argInt(s.Args, "speculative-num-steps")
	draft, hasDraft := argInt(s.Args, "speculative-num-draft-tokens")
	if hasTopk && topk == 1 && hasSteps && hasDraft && draft != steps+1 {
		out = append(out, Warning{Arg: "speculative-num-draft-tokens", Text: fmt.Sprintf(
			"scenario %s: with speculative-eagle-topk 1 SGLang forces speculative-num-draft-tokens to num-steps+1 = %d, not %d",
			s.Scenario, steps+1, draft)})
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
