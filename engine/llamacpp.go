package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// llama.cpp's llama-server (github ggml-org/llama.cpp, tools/server).
// Sources: tools/server/README.md (/health, /props, /slots and
// ?action=erase, timings, /metrics), common/arg.cpp (the speculative flags,
// as a CPU build at commit 5eca4e3ca prints them in --help), PR #26389 (the
// spec_decode counters), and public logs for the fatal lines.
// docs/ENGINES.md lists each fact's source and what is unverified.

// llama-server's speculative counters on /metrics (PR #26389, merged
// 2026-08; absent before): draft tokens proposed and accepted, and drafts,
// the verification steps. Each finished request adds its own.
const (
	llamacppAcceptedTokens = "llamacpp:spec_decode_num_accepted_tokens_total"
	llamacppDrafts         = "llamacpp:spec_decode_num_drafts_total"

	SourceLlamaCppCounters = "llamacpp:spec_decode counters, increase over the level: 1 + accepted/drafts"
)

// llamacppDraftModelKeys are the spellings of llama-server's draft model
// flag: --spec-draft-model, with the older -md and --model-draft as aliases.
var llamacppDraftModelKeys = []string{"spec-draft-model", "md", "model-draft"}

// SourceLlamaCppTimings names the accept length computed from the
// per-response timings of llama.cpp.
const SourceLlamaCppTimings = "llama.cpp timings of each response: tokens / (tokens − draft_n_accepted)"

var llamacpp = &Profile{
	Name:     LlamaCpp,
	Title:    "llama.cpp llama-server",
	Launcher: []string{"llama-server"},
	Help:     &HelpCall{Args: []string{"--help"}, Format: HelpLlamaCpp, Version: []string{"--version"}},
	Fixed: func(model, host string, port int) []string {
		return []string{"--model", model, "--host", host, "--port", strconv.Itoa(port)}
	},
	Reserved: map[string]string{"model": "model", "m": "model", "host": "the launcher (127.0.0.1)", "port": "engine.port"},
	// common/arg.cpp refuses a --slot-save-path that is not an existing
	// directory: `error while handling argument "--slot-save-path": not a
	// directory: PATH`.
	DirArgs: []string{"slot-save-path"},
	// Connection refused while starting, then 503 {"error":{"message":"Loading model"}}, then 200 {"status":"ok"}.
	HealthPath: "/health",
	Fatal: []string{
		"error loading model",
		"exiting due to model loading error",
		"couldn't bind HTTP server socket",
		"error: invalid argument:",
		"cudaMalloc failed",
		"error while handling argument",
	},
	// The cause, which llama-server prints before what it broke: a refused
	// argument (then the argument's usage and "to show complete usage, run
	// with -h", common/arg.cpp), the model loader's reason (then "failed to
	// load model" from each caller and "exiting due to model loading
	// error"), a failed allocation or assertion, a C++ exception's what().
	ErrorLines: []*regexp.Regexp{regexp.MustCompile(
		`error while handling argument|error: invalid argument:|error loading model|couldn't bind HTTP server socket|cudaMalloc failed|GGML_ASSERT|\bwhat\(\):`)},
	Info: &InfoCall{Path: "/props", File: "props.json", Parse: parseLlamaCppProps},
	// Each response's timings (draft_n, draft_n_accepted in the final
	// chunk) come first; builds with PR #26389 also count on /metrics, read
	// when no response carried counts.
	ResponseAccept: SourceLlamaCppTimings,
	Accept:         llamacppAccept,
	Server:         llamacppServer,
	Reset:          llamacppReset,
	// /tokenize, and token-id prompts on /v1/completions (a prompt may be
	// a list of token ids).
	TokenizeCall: llamacppTokenize, TokenPrompts: true,
	Speculative: llamacppSpeculative,
	Check:       llamacppCheck,
}

func init() { register(llamacpp) }

// parseLlamaCppProps reads /props's build_info ("b1234-abcdef01": the build
// number and the commit). A build made outside a git checkout reports
// "b0-unknown" (build number 0, commit unknown): that is no version, and is
// recorded as "unknown" with the server's own words beside it, so nobody
// reads "b0" as a release.
func parseLlamaCppProps(body []byte) Info {
	var p struct {
		BuildInfo string `json:"build_info"`
	}
	if json.Unmarshal(body, &p) != nil {
		return Info{}
	}
	if llamaCppUnversioned(p.BuildInfo) {
		return Info{Version: fmt.Sprintf("unknown (build_info %q)", p.BuildInfo)}
	}
	return Info{Version: p.BuildInfo}
}

// llamaCppUnversioned reports a build_info that names no build: build
// number 0 or an unknown commit.
func llamaCppUnversioned(b string) bool {
	num, commit, _ := strings.Cut(b, "-")
	return num == "b0" || commit == "unknown"
}

// llamacppReset erases every slot's prompt cache. The slot count comes from
// /props (total_slots). The erase action answers 501 unless the server runs
// with --slot-save-path; it does not clear the host-RAM prompt cache
// (--cache-ram), which the next request can load back from.
func llamacppReset(ctx context.Context, c *http.Client, base, apiKey string) (string, error) {
	status, body, err := call(ctx, c, http.MethodGet, base+"/props", apiKey)
	if err != nil {
		return "", fmt.Errorf("GET /props: %w", err)
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("GET /props: status %d: %s", status, excerpt(body))
	}
	var props struct {
		TotalSlots int `json:"total_slots"`
	}
	if err := json.Unmarshal(body, &props); err != nil || props.TotalSlots < 1 {
		return "", fmt.Errorf("GET /props: no total_slots in %s", excerpt(body))
	}
	for i := range props.TotalSlots {
		path := fmt.Sprintf("/slots/%d?action=erase", i)
		err := postReset(ctx, c, base, path, apiKey, map[int]string{
			http.StatusNotImplemented: "slot actions need llama-server --slot-save-path",
			http.StatusNotFound:       "this llama-server has no /slots actions (--no-slots?)",
		}, nil)
		if err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("POST /slots/{0..%d}?action=erase", props.TotalSlots-1), nil
}

// llamacppAccept is the level's accept length from the increase of
// llama-server's speculative counters: 1 + accepted / drafts, the
// definition llama.cpp's own statistics use (PR #24536, after vLLM's).
func llamacppAccept(s Scrapes) (float64, string) {
	drafts, okD := increase(s, llamacppDrafts)
	accepted, okA := increase(s, llamacppAcceptedTokens)
	if !okD || !okA || drafts <= 0 {
		return 0, ""
	}
	return 1 + accepted/drafts, SourceLlamaCppCounters
}

// llamacppSpeculative: newer builds speculate when --spec-type names a
// method; older ones when a draft model is given.
func llamacppSpeculative(a Args) bool {
	if v, ok := a.ArgValue("spec-type"); ok {
		return v != "" && v != "none"
	}
	_, ok := llamacppDraftModel(a)
	return ok
}

// llamacppDraftModel returns the draft model flag a scenario sets, under
// whichever spelling it uses.
func llamacppDraftModel(a Args) (key string, ok bool) {
	for _, k := range llamacppDraftModelKeys {
		if argSet(a, k) {
			return k, true
		}
	}
	return "", false
}

func llamacppCheck(s Setup) []Warning {
	var out []Warning
	slots, hasSlots := argInt(s.Args, "parallel")
	if !hasSlots {
		slots, hasSlots = argInt(s.Args, "np")
	}
	switch {
	case hasSlots && slots < s.MaxLevel:
		out = append(out, Warning{Arg: "parallel", Text: fmt.Sprintf(
			"scenario %s: llama-server decodes at most parallel=%d requests at once and the sweep goes to %d: the levels above it measure queueing; set parallel to %d (the same in every scenario)",
			s.Scenario, slots, s.MaxLevel, s.MaxLevel)})
	case !hasSlots && s.MaxLevel > 1:
		out = append(out, Warning{Text: fmt.Sprintf(
			"scenario %s: parallel is unset, and llama-server's default slot count differs between builds; set parallel to %d (the sweep's top level) in every scenario",
			s.Scenario, s.MaxLevel)})
	}
	if ctx, ok := argInt(s.Args, "ctx-size"); ok && hasSlots && slots > 0 && ctx > 0 && ctx/slots < s.MaxTokens {
		out = append(out, Warning{Arg: "ctx-size", Text: fmt.Sprintf(
			"scenario %s: ctx-size %d is shared by %d slots, %d tokens each, less than max_tokens %d alone",
			s.Scenario, ctx, slots, ctx/slots, s.MaxTokens)})
	}
	_, typed := s.Args.ArgValue("spec-type")
	if k, ok := llamacppDraftModel(s.Args); ok && !typed {
		out = append(out, Warning{Arg: k, Text: fmt.Sprintf(
			"scenario %s: %s without spec-type: newer llama-server builds load the draft model but do not speculate with it (set spec-type, e.g. draft-simple)",
			s.Scenario, k)})
	}
	// The baseline is the one scenario that must not speculate. spec-type
	// defaults to none in the builds checked (5eca4e3ca), but drafting that
	// starts by itself from a model's own MTP heads is reported for newer
	// ones; spec-type none rules it out on every build that has the flag.
	if s.Baseline && !typed && !llamacppSpeculative(s.Args) {
		out = append(out, Warning{Text: fmt.Sprintf(
			"scenario %s: the baseline does not set spec-type: newer llama-server builds may draft by themselves from a model with MTP heads; set spec-type: none so that it measures decoding without speculation",
			s.Scenario)})
	}
	if !s.UniquePrompts {
		if _, ok := s.Args.ArgValue("slot-save-path"); !ok {
			out = append(out, Warning{Text: fmt.Sprintf(
				"scenario %s: llama-server erases its slots between levels only with slot-save-path set; set it (any writable directory), or set sweep.unique_prompts: true",
				s.Scenario)})
		}
		if v, ok := s.Args.ArgValue("cache-ram"); !ok || v != "0" {
			out = append(out, Warning{Arg: "cache-ram", Text: fmt.Sprintf(
				"scenario %s: erasing slots does not clear llama-server's host-RAM prompt cache (cache-ram), which the next level can load prompts back from; set cache-ram: 0, or set sweep.unique_prompts: true",
				s.Scenario)})
		}
	}
	return out
}
