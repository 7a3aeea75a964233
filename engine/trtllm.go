package engine

import (
	"fmt"
	"regexp"
	"strconv"
)

// TensorRT-LLM's trtllm-serve (github NVIDIA/TensorRT-LLM). Sources:
// shared/facts/engines.md and NVIDIA AIPerf's "control hooks by server" page
// (no HTTP prefix-cache reset). docs/ENGINES.md lists each fact's source
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
	return out
}
