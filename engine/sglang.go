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

// SGLang's metric names and accept-length sources.
const (
	sglangAcceptGauge = "sglang:spec_accept_length"

	SourceSGLangMid   = "sglang:spec_accept_length at mid-level (gauge over the last 40 decode batches)"
	SourceSGLangAfter = "sglang:spec_accept_length after the level (gauge over the last 40 decode batches, so it leans to the drain tail)"
	SourceServerInfo  = "/get_server_info avg_spec_accept_length (cumulative over the server's life)"
)

var sglang = &Profile{
	Name:     SGLang,
	Title:    "SGLang",
	Launcher: []string{"{python}", "-m", "sglang.launch_server"},
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
	Info:        &InfoCall{Path: "/get_server_info", File: "get_server_info.json", Parse: parseSGLangInfo},
	Accept:      sglangAccept,
	Reset:       sglangReset,
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

// sglangAccept prefers the windowed gauge at mid-level (the steady state),
// then after the level, then the lifetime average from server info.
func sglangAccept(s Scrapes) (float64, string) {
	if v := s.Mid[sglangAcceptGauge]; v > 0 {
		return v, SourceSGLangMid
	}
	if v := s.After[sglangAcceptGauge]; v > 0 {
		return v, SourceSGLangAfter
	}
	if a := parseSGLangInfo(s.InfoAfter).AcceptLength; a != nil && *a > 0 {
		return *a, SourceServerInfo
	}
	return 0, ""
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
