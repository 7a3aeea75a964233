package cmdline

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ServerArgs is the configuration as SGLang's ServerArgs names it, for
// /server_info and the server_args log line: every flag given, under its
// dest, then the effective values of the ones the sim reads.
func ServerArgs(c *Config) map[string]any {
	maxRun, _ := c.RunningCap()
	m := map[string]any{}
	for k, v := range c.Given {
		m[k] = pyValue(v)
	}
	var specAlg any
	if c.Speculative() {
		specAlg = c.SpecAlgorithm
	}
	for k, v := range map[string]any{
		"model_path":                   c.ModelPath,
		"tokenizer_path":               c.ModelPath,
		"served_model_name":            c.ModelName(),
		"host":                         c.Host,
		"port":                         c.Port,
		"tp_size":                      c.TP,
		"speculative_algorithm":        specAlg,
		"speculative_draft_model_path": nilIfEmpty(c.DraftModelPath),
		"speculative_num_steps":        c.SpecSteps,
		"speculative_eagle_topk":       c.SpecTopK,
		"speculative_num_draft_tokens": c.DraftTokens(),
		"speculative_adaptive":         c.Adaptive != nil,
		"speculative_adaptive_config":  nilIfEmpty(c.SpecAdaptiveConfig),
		"disable_overlap_schedule":     c.DisableOverlapSchedule,
		"cuda_graph_max_bs_decode":     c.CudaGraphMaxBS,
		"max_running_requests":         maxRun,
		"attention_backend":            nilIfEmpty(c.AttentionBackend),
		// SGLang folds the deprecated boolean into the backend and clears it.
		"enable_flashinfer_allreduce_fusion":          false,
		"flashinfer_allreduce_fusion_backend":         c.EffectiveFusionBackend(),
		"enforce_disable_flashinfer_allreduce_fusion": c.EnforceDisableFusion,
		"disable_custom_all_reduce":                   c.DisableCustomAR,
		"enable_metrics":                              c.EnableMetrics,
		"mem_fraction_static":                         c.MemFractionStatic,
		"context_length":                              c.ContextLength,
		"chunked_prefill_size":                        c.ChunkedPrefillSize,
		"disable_radix_cache":                         !c.CacheOn(),
		"page_size":                                   c.CachePage(),
		"max_total_tokens":                            nilIfZero(c.MaxTotalTokens),
		"enable_cache_report":                         c.EnableCacheReport,
		"log_level":                                   c.LogLevel,
	} {
		m[k] = v
	}
	return m
}

// pyValue is a given flag's value as ServerArgs holds it: true for a bare
// flag (false for --no-X), a number, a list of numbers (nargs "+"), else the string.
func pyValue(v string) any {
	if v == "true" {
		return true
	}
	if v == "false" { // --no-X of a BooleanOptionalAction
		return false
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	if parts := strings.Fields(v); len(parts) > 1 {
		list := make([]any, len(parts))
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil {
				return v
			}
			list[i] = n
		}
		return list
	}
	return v
}

func nilIfZero(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ServerArgsLine renders the args as Python's dataclass repr, sorted.
func ServerArgsLine(c *Config) string {
	m := ServerArgs(c)
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + pyRepr(m[k])
	}
	return "server_args=ServerArgs(" + strings.Join(parts, ", ") + ")"
}

func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		return PyBool(x)
	case string:
		return "'" + x + "'"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(x)
	}
}

func PyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
