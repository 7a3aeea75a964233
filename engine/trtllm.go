package engine

import (
	"fmt"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// TensorRT-LLM's trtllm-serve (github NVIDIA/TensorRT-LLM). Sources:
// tensorrt_llm/serve/openai_server.py (/metrics, the background statistics
// collector), tensorrt_llm/commands/serve.py (the flags), NVIDIA AIPerf's
// "control hooks by server" page (no HTTP prefix-cache reset) and the pull
// requests docs/ENGINES.md names. docs/ENGINES.md lists each fact's source
// and what is unverified.

var trtllm = &Profile{
	Name:     TRTLLM,
	Title:    "TensorRT-LLM trtllm-serve",
	Launcher: []string{"trtllm-serve"},
	Help:     &HelpCall{Args: []string{"serve", "--help"}, Format: HelpClick}, // the group's default command
	Fixed: func(model, host string, port int) []string {
		return []string{model, "--host", host, "--port", strconv.Itoa(port)}
	},
	Reserved:   map[string]string{"host": "the launcher (127.0.0.1)", "port": "engine.port"},
	HealthPath: "/health",
	Fatal: append(pythonFatal[:len(pythonFatal):len(pythonFatal)],
		"NCCL error",
	),
	// TensorRT-LLM's own error lines name the cause ("[TRT-LLM] [RANK 0] [E]
	// Failed to initialize executor on rank 0: [TensorRT-LLM][ERROR] …");
	// the Python traceback after them only ends in "RuntimeError: Executor
	// worker returned error".
	ErrorLines: []*regexp.Regexp{regexp.MustCompile(`\[TRT-LLM\](?: \[RANK \d+\])? \[E\]|\[TensorRT-LLM\]\[ERROR\]`)},
	Info:       &InfoCall{Path: "/version", File: "version.json", Parse: parseVersion},
	// Speculative decoding is set in the YAML file (--config or
	// --extra_llm_api_options), which bakeoff does not read; the accept
	// length comes from /metrics's iteration statistics (trtllm_metrics.go).
	ParseMetrics: parseIterationStats,
	Accept:       trtllmAccept,
	NoReset:      "trtllm-serve has no HTTP call to clear its KV-cache block reuse (it is set in its configuration)",
	Check:        trtllmCheck,
}

func init() { register(trtllm) }

func trtllmCheck(s Setup) []Warning {
	var out []Warning
	n, ok := argInt(s.Args, "max_batch_size")
	switch {
	case !ok:
		out = append(out, Warning{Text: fmt.Sprintf(
			"scenario %s: max_batch_size is unset, and trtllm-serve's default has changed between releases; set it (to the same value in every scenario)",
			s.Scenario)})
	case n < s.MaxLevel:
		out = append(out, Warning{Arg: "max_batch_size", Text: fmt.Sprintf(
			"scenario %s: trtllm-serve batches at most max_batch_size=%d requests and the sweep goes to %d: the levels above it measure queueing",
			s.Scenario, n, s.MaxLevel)})
	}
	if !s.UniquePrompts {
		out = append(out, Warning{Text: fmt.Sprintf(
			"scenario %s: trtllm-serve's prefix cache cannot be cleared between levels; set sweep.unique_prompts: true, or turn block reuse off in its configuration",
			s.Scenario)})
	}
	out = append(out, trtllmStatsCheck(s)...)
	return out
}

// trtllmConfigKeys are the flags that name trtllm-serve's YAML file of LLM
// API options (commands/serve.py: --config, and its older name).
var trtllmConfigKeys = []string{"config", "extra_llm_api_options"}

// trtllmStatsCheck reads the scenario's options file, where bakeoff can see
// it. With return_perf_metrics and enable_iter_perf_stats both on,
// openai_server.py starts a background collector that drains the engine's
// iteration-statistics queue for its Prometheus metrics. Before PR #13405
// (merged 2026-04) GET /metrics drained the same queue and lost most
// iterations to the collector (the PR measured 2 to 27% of them reaching
// /metrics); since then the collector copies each iteration into a buffer of
// iter_stats_max_iterations (default 1000) that /metrics reads and clears.
func trtllmStatsCheck(s Setup) []Warning {
	if s.ReadFile == nil {
		return nil
	}
	for _, k := range trtllmConfigKeys {
		path, ok := s.Args.ArgValue(k)
		if !ok || path == "" {
			continue
		}
		body, err := s.ReadFile(path)
		if err != nil {
			continue
		}
		var opts struct {
			PerfMetrics bool `yaml:"return_perf_metrics"`
			IterStats   bool `yaml:"enable_iter_perf_stats"`
		}
		if yaml.Unmarshal(body, &opts) != nil || !opts.PerfMetrics || !opts.IterStats {
			continue
		}
		return []Warning{{Arg: k, Text: fmt.Sprintf(
			"scenario %s: %s turns on return_perf_metrics with enable_iter_perf_stats: trtllm-serve builds before PR #13405 (2026-04) then drain the iteration statistics with a collector of their own, and bakeoff's /metrics scrapes get few of them, so the accept length comes from a fraction of the level's iterations or is missing; use a newer build, or leave return_perf_metrics off",
			s.Scenario, path)}}
	}
	return nil
}
