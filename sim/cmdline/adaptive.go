package cmdline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// SGLang's adaptive speculative decoding (--speculative-adaptive) picks each
// decode round's step count from the running batch size: a JSON config maps
// batch-size lower bounds to candidate steps, 0 meaning no drafting, and
// within a band an EMA of the accepted drafts moves between the candidates
// (python/sglang/srt/speculative/adaptive_spec_params.py at 015c8726). It is
// the one way SGLang changes its speculative settings, or turns speculation
// off, above a batch size: it has no vLLM-style disable-by-batch-size flag.
// The resolution below follows python/sglang/srt/arg_groups/
// speculative_hook.py at 004c82e0 (_maybe_disable_adaptive,
// _init_adaptive_speculative_params); the model runs the plan
// (sim/model/adaptive.go).

// AdaptivePlan is the adaptive speculative decoding a server runs.
type AdaptivePlan struct {
	// Strategy is the config's "strategy": "ema" (the default) or
	// "throughput_aware".
	Strategy string
	// Slots are the batch-size bands, by lower bound ascending.
	Slots []AdaptiveSlot
}

// AdaptiveSlot is one batch-size band of the config and its EMA knobs (the
// entry's own, else the config's top level, else SGLang's defaults).
type AdaptiveSlot struct {
	MinBatch       int
	Candidates     []int // sorted, distinct
	EMAAlpha       float64
	UpdateInterval int
	WarmupBatches  int
	DownHysteresis float64
	UpHysteresis   float64
	CeilingCoeff   float64
}

// Candidates is the union of the bands' candidate steps, sorted.
func (a *AdaptivePlan) Candidates() []int {
	var all []int
	for _, s := range a.Slots {
		all = append(all, s.Candidates...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// defaultAdaptiveConfig is SGLang's DEFAULT_ADAPTIVE_CONFIG, used without
// --speculative-adaptive-config: up to 7 steps below 8 running requests,
// at most 3 below 32, at most 1 below 64, and no drafting from 64 on.
const defaultAdaptiveConfig = `{
 "1": {"candidate_steps": [1, 3, 5, 7], "up_hysteresis": 0.0, "down_hysteresis": -0.25, "ceiling_coeff": 0},
 "8": {"candidate_steps": [0, 1, 3], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0},
 "32": {"candidate_steps": [0, 1], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0},
 "64": {"candidate_steps": [0], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0}
}`

// startupError is an exception SGLang raises while it builds its server
// args: the server ends before it loads (Run prints the traceback).
type startupError struct{ Exception, Message string }

// resolveAdaptive turns --speculative-adaptive into c.Adaptive, or leaves it
// off with SGLang's warning where SGLang falls back to static speculative
// params, or records the startup error SGLang raises.
func resolveAdaptive(c *Config) {
	if !c.SpecAdaptive {
		return
	}
	if reason := c.adaptiveUnsupported(); reason != "" {
		c.Notices = append(c.Notices, "speculative_adaptive disabled: "+reason+". Falling back to static speculative params.")
		return
	}
	plan, err := loadAdaptiveConfig(c.SpecAdaptiveConfig)
	if err != nil {
		c.startup = err
		return
	}
	cands := plan.Candidates()
	if _, given := c.Given["speculative_num_steps"]; !given {
		c.SpecSteps = cands[len(cands)/2]
	}
	if !slices.Contains(cands, c.SpecSteps) {
		c.startup = &startupError{"ValueError", fmt.Sprintf("--speculative-num-steps=%d is not in the adaptive config candidate_steps %s. Pass one of those values.", c.SpecSteps, strings.ReplaceAll(fmt.Sprint(cands), " ", ", "))}
		return
	}
	c.SpecTopK = 1
	c.SpecDraftTokens = c.SpecSteps + 1
	c.Adaptive = plan
}

// adaptiveUnsupported is adaptive_unsupported_reason for what the sim reads:
// EAGLE and EAGLE3 only (NEXTN is EAGLE's alias by then), topk 1 only, and
// none of the features whose state the controller's swap would break.
func (c *Config) adaptiveUnsupported() string {
	alg := c.SpecAlgorithm
	if alg == "NEXTN" {
		alg = "EAGLE"
	}
	switch {
	case alg == "":
		return "speculative_algorithm=None (only EAGLE/EAGLE3 are supported)"
	case alg != "EAGLE" && alg != "EAGLE3":
		return "speculative_algorithm=" + alg + " (only EAGLE/EAGLE3 are supported)"
	case c.SpecTopK != 1:
		return fmt.Sprintf("speculative_eagle_topk=%d (only topk=1 is supported)", c.SpecTopK)
	case c.EnableDPAttention:
		return "attention DP is not supported (adaptive tier decisions are not synchronized across DP ranks)"
	case c.Given["enable_multi_layer_eagle"] == "true":
		return "enable_multi_layer_eagle=True is not supported (MultiLayerEagleWorkerV2 does not implement adaptive)"
	case c.Given["enable_two_batch_overlap"] == "true":
		return "enable_two_batch_overlap=True is not supported (adaptive state swap would discard the TboAttnBackend wrapper)"
	case c.Given["enable_pdmux"] == "true":
		return "enable_pdmux=True is not supported (adaptive state swap does not update decode_attn_backend_group)"
	}
	if pp := c.Given["pp_size"]; pp != "" && pp != "1" && c.SpecAdaptiveConfig != "" {
		if plan, err := loadAdaptiveConfig(c.SpecAdaptiveConfig); err == nil && plan.Strategy == "throughput_aware" {
			return "pp_size=" + pp + " is not supported by throughput-aware adaptive profiling (synthetic startup batches do not traverse PP stages)"
		}
	}
	return ""
}

// loadAdaptiveConfig reads the config file (path "" is SGLang's default)
// with SGLang's checks and their words.
func loadAdaptiveConfig(path string) (*AdaptivePlan, error) {
	raw := []byte(defaultAdaptiveConfig)
	if path != "" {
		var err error
		if raw, err = os.ReadFile(path); err != nil {
			return nil, &startupError{"FileNotFoundError", "[Errno 2] No such file or directory: '" + path + "'"}
		}
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // 3 and 3.0 differ to SGLang's isinstance(s, int)
	if err := dec.Decode(&doc); err != nil {
		return nil, &startupError{"json.decoder.JSONDecodeError", err.Error()}
	}
	cfg, ok := doc.(map[string]any)
	if !ok {
		return nil, &startupError{"ValueError", "speculative adaptive config must be a JSON object, got " + pyTypeName(doc)}
	}
	plan := &AdaptivePlan{Strategy: "ema"}
	if s, ok := cfg["strategy"]; ok {
		if s != "ema" && s != "throughput_aware" {
			return nil, &startupError{"ValueError", "speculative adaptive config 'strategy' must be 'ema' or 'throughput_aware', got " + pyRepr(s)}
		}
		plan.Strategy = s.(string)
	}
	// The throughput-aware controller drafts at least one step in every band.
	positive := plan.Strategy == "throughput_aware"
	keys := objectKeys(raw)
	for _, key := range keys {
		if key == "" || strings.Trim(key, "0123456789") != "" {
			continue // not a batch size (SGLang's str.isdigit)
		}
		entry, _ := cfg[key].(map[string]any)
		steps, ok := intList(entry["candidate_steps"], positive)
		if !ok {
			got := pyRepr(entry["candidate_steps"])
			if positive {
				return nil, &startupError{"ValueError", "throughput-aware config key '" + key + "': candidate_steps must be a non-empty list of positive ints, got " + got}
			}
			return nil, &startupError{"ValueError", "BS " + key + ": candidate_steps must be a list of non-negative ints, got " + got}
		}
		n, _ := strconv.Atoi(key)
		plan.Slots = append(plan.Slots, slotOf(n, steps, cfg, entry))
	}
	if len(plan.Slots) == 0 {
		names := make([]any, len(keys))
		for i, k := range keys {
			names[i] = k
		}
		if positive {
			return nil, &startupError{"ValueError", `throughput-aware adaptive config must contain at least one integer-string BS key, e.g. {"1": {"candidate_steps": [1, 3, 7]}}. Got keys: ` + pyRepr(names)}
		}
		return nil, &startupError{"ValueError", `speculative_adaptive_config must contain at least one integer-string BS key, e.g. {"1": {"candidate_steps": [1,3,7]}}. Got keys: ` + pyRepr(names)}
	}
	slices.SortFunc(plan.Slots, func(a, b AdaptiveSlot) int { return a.MinBatch - b.MinBatch })
	return plan, nil
}

// slotOf is one band with its knobs: the entry's over the config's top
// level ({**cfg, **entry}) over AdaptiveStepSlot's defaults.
func slotOf(minBatch int, steps []int, cfg, entry map[string]any) AdaptiveSlot {
	num := func(name string, def float64) float64 {
		for _, m := range []map[string]any{entry, cfg} {
			if v, ok := m[name].(json.Number); ok {
				if f, err := v.Float64(); err == nil {
					return f
				}
			}
		}
		return def
	}
	slices.Sort(steps)
	return AdaptiveSlot{
		MinBatch:       minBatch,
		Candidates:     slices.Compact(steps),
		EMAAlpha:       num("ema_alpha", 0.2),
		UpdateInterval: max(1, int(num("update_interval", 5))),
		WarmupBatches:  int(num("warmup_batches", 10)),
		DownHysteresis: num("down_hysteresis", -0.25),
		UpHysteresis:   num("up_hysteresis", 0),
		CeilingCoeff:   num("ceiling_coeff", 0),
	}
}

// intList reads a non-empty JSON list of whole numbers ≥ 0 (≥ 1 when
// positive).
func intList(v any, positive bool) ([]int, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	out := make([]int, len(list))
	for i, e := range list {
		num, _ := e.(json.Number)
		n, err := strconv.Atoi(string(num))
		if err != nil || n < 0 || (positive && n < 1) {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// objectKeys are the top-level keys of a JSON object in the order written,
// as Python's dict keeps them.
func objectKeys(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return keys
}

// pyTypeName is the Python type of a decoded JSON value.
func pyTypeName(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "str"
	case json.Number:
		if _, err := strconv.Atoi(v.(json.Number).String()); err != nil {
			return "float"
		}
		return "int"
	case bool:
		return "bool"
	case nil:
		return "NoneType"
	}
	return "dict"
}

// StartupError is the exception SGLang raises while it builds its server
// args, as its class and message ("" when none): the server ends before it
// loads.
func (c *Config) StartupError() (exception, message string) {
	if c.startup == nil {
		return "", ""
	}
	e := c.startup.(*startupError)
	return e.Exception, e.Message
}

func (e *startupError) Error() string { return e.Exception + ": " + e.Message }
