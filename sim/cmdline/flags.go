package cmdline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The sim's command line is SGLang's as SGLang's argparse parser builds it
// (python/sglang/srt/server_args.py, ServerArgs.add_cli_args, with the fields
// of python/sglang/srt/arg_groups/fields/*.py and the deprecated registrations
// at its end; docs/SIM.md names the version), cut down to the flags a
// campaign sets, plus the sim's own --sim-… knobs. This one table parses the
// command line (parse.go) and writes --help (help.go), so that what the help
// lists is what the sim accepts.

// progName is the parser's prog: prepare_server_args builds
// argparse.ArgumentParser(prog="sglang serve"), whichever entry point
// (`sglang serve` or `python -m sglang.launch_server`) started it.
const progName = "sglang serve"

// flagKind says how a flag takes its value, as argparse's nargs and action.
type flagKind int

const (
	kindValue flagKind = iota // one value: --key value or --key=value
	kindBool                  // store_true: a bare --key
	kindList                  // nargs="+": one value or more
	kindHelp                  // -h, --help
)

// flagSpec is one argparse action: its option strings, how it takes its
// value, and what it sets. A nil set accepts and records the flag only.
type flagSpec struct {
	// names are the option strings without their leading dashes, SGLang's
	// own spelling first, then its aliases, in argparse's order.
	names []string
	kind  flagKind
	// dest is argparse's dest, the ServerArgs field the value lands in; ""
	// is the first name with '-' read as '_'. A deprecated alias shares the
	// dest of the flag it stands for.
	dest string
	// metavar is what the help shows for the value; "" is argparse's
	// default: the choices in braces, else the dest in upper case.
	metavar string
	choices []string
	help    string
	// hidden is argparse.SUPPRESS: parsed, but in neither help nor usage.
	hidden bool
	// sim marks the sim's own knobs, which are not SGLang server args.
	sim bool
	// replacement is set on a flag SGLang registers with a Deprecated…Action
	// (python/sglang/srt/arg_groups/argparse_actions.py): it still works,
	// and parsing it prints SGLang's warning naming this replacement.
	replacement string
	// set applies one value (each value of a list in turn); the value has
	// passed the choices.
	set func(c *Config, v string) error
}

// destName is the flag's dest.
func (f *flagSpec) destName() string {
	if f.dest != "" {
		return f.dest
	}
	return strings.ReplaceAll(f.names[0], "-", "_")
}

// optionStrings are the flag's option strings as argparse holds them.
func (f *flagSpec) optionStrings() []string {
	out := make([]string, len(f.names))
	for i, n := range f.names {
		if f.kind == kindHelp && len(n) == 1 {
			out[i] = "-" + n
		} else {
			out[i] = "--" + n
		}
	}
	return out
}

// displayName is how argparse names the action in an error:
// its option strings joined by '/'.
func (f *flagSpec) displayName() string { return strings.Join(f.optionStrings(), "/") }

// Value checks. Their words are argparse's ("invalid int value: 'x'") where
// SGLang's type is int or float; the sim's own stricter checks (a positive
// count, a duration) follow the same pattern.

func intFlag(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s'", v)
		}
		if dst != nil {
			*dst(c) = n
		}
		return nil
	}
}

// posIntFlag is intFlag for a count that must be at least 1 (a modulus).
func posIntFlag(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("invalid positive int value: '%s'", v)
		}
		*dst(c) = n
		return nil
	}
}

func floatFlag(dst func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("invalid float value: '%s'", v)
		}
		if dst != nil {
			*dst(c) = f
		}
		return nil
	}
}

// nonNegFloatFlag is floatFlag for a σ: negative values are refused.
func nonNegFloatFlag(dst func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("invalid non-negative float value: '%s'", v)
		}
		*dst(c) = f
		return nil
	}
}

// secondsValue reads a count of seconds as argparse's int or float type
// reads it (kind names the type in the error) and returns it as a duration.
func secondsValue(v, kind string) (time.Duration, error) {
	var f float64
	var err error
	if kind == "int" {
		var n int
		n, err = strconv.Atoi(v)
		f = float64(n)
	} else {
		f, err = strconv.ParseFloat(v, 64)
	}
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid %s value: '%s'", kind, v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

func strFlag(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

func boolFlag(dst func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, _ string) error { *dst(c) = true; return nil }
}

func durFlag(dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("invalid duration value: '%s'", v)
		}
		*dst(c) = d
		return nil
	}
}

// Choice lists, as SGLang's source has them (python/sglang/srt/arg_groups/
// choices.py at commit 0099dee6, which fields/exec_.py imports; exec_.py at
// commit 01d795f8 for the cuda-graph and fusion backends). Sampling's is a
// Python set there, so SGLang's own help lists it in no fixed order.
var (
	attentionBackendChoices = []string{
		"triton", "torch_native", "flex_attention", "dsa", "nsa", "qsa", "dsv4", "compressed",
		"fa3", "fa4", "flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla", "tokenspeed_mla",
		"trtllm_mha", "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer", "aiter", "wave",
		"intel_amx", "ascend", "intel_xpu", "mlu",
	}
	moeRunnerBackendChoices = []string{
		"auto", "deep_gemm", "triton", "triton_kernel", "flashinfer_trtllm", "experimental_sgl_trtllm",
		"flashinfer_trtllm_routed", "flashinfer_cutlass", "flashinfer_mxfp4", "flashinfer_cutedsl",
		"flashinfer_megamoe", "cutlass", "aiter", "marlin", "humming", "experimental_sgl_marlin",
		"hpc_ops", "megamoe", "intel_xpu",
	}
	samplingBackendChoices  = []string{"flashinfer", "pytorch", "ascend", "intel_xpu"}
	cudaGraphBackendChoices = []string{"full", "breakable", "disabled"}
	fusionBackendChoices    = []string{"auto", "trtllm", "mnnvl", "cutedsl"}
)

// specAlgorithms are the speculative algorithms SGLang builds in
// (python/sglang/srt/arg_groups/fields/spec.py). SGLang's argparse takes any
// name (others may be registered at run time) and refuses an unknown one
// when the server starts; the sim does the same (checkConfig).
var specAlgorithms = []string{"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO"}

// sglangFlags are SGLang's flags that the sim understands or accepts, in
// the order SGLang's --help lists them. The help texts are SGLang's where
// the files named above were read; the others say the same in short.
var sglangFlags = []flagSpec{
	{names: []string{"model-path", "model"}, help: "The path of the model weights. This can be a local folder or a Hugging Face repo ID.",
		set: strFlag(func(c *Config) *string { return &c.ModelPath })},
	{names: []string{"tokenizer-path"}, help: "The path of the tokenizer."},
	{names: []string{"trust-remote-code"}, kind: kindBool, help: "Whether or not to allow for custom models defined on the Hub in their own modeling files."},
	{names: []string{"context-length"}, help: "The model's maximum context length. Defaults to None (will use the value from the model's config.json instead).",
		set: intFlag(func(c *Config) *int { return &c.ContextLength })},
	{names: []string{"dtype"}, help: "Data type for model weights and activations."},
	{names: []string{"quantization"}, help: "The quantization method."},
	{names: []string{"kv-cache-dtype"}, help: "Data type for kv cache storage."},
	{names: []string{"served-model-name"}, help: "Override the model name returned by the v1/models endpoint in OpenAI API server.",
		set: strFlag(func(c *Config) *string { return &c.ServedModelName })},
	{names: []string{"chat-template"}, help: "The builtin chat template name or the path of the chat template file."},
	{names: []string{"host"}, help: "The host of the HTTP server.", set: strFlag(func(c *Config) *string { return &c.Host })},
	{names: []string{"port"}, help: "The port of the HTTP server.", set: intFlag(func(c *Config) *int { return &c.Port })},
	{names: []string{"skip-server-warmup"}, kind: kindBool, help: "If set, skip warmup."},
	{names: []string{"api-key"}, help: "Set API key of the server. It is also used in the OpenAI API compatible server."},
	{names: []string{"admin-api-key"}, help: "Set admin API key for administrative/control endpoints."},
	{names: []string{"mem-fraction-static"}, help: "The fraction of the memory used for static allocation (model weights and KV cache memory pool). Use a smaller value if you see out-of-memory errors.",
		set: floatFlag(func(c *Config) *float64 { return &c.MemFractionStatic })},
	{names: []string{"max-running-requests"}, help: "The maximum number of running requests.",
		set: intFlag(func(c *Config) *int { return &c.MaxRunningRequests })},
	{names: []string{"max-total-tokens"}, help: "The maximum number of tokens in the memory pool. If not specified, it will be automatically calculated based on the memory usage fraction. This option is typically used for development and debugging purposes.",
		set: posIntFlag(func(c *Config) *int { return &c.MaxTotalTokens })},
	{names: []string{"chunked-prefill-size"}, help: "The maximum number of tokens in a chunk for the chunked prefill. Setting this to -1 means disabling chunked prefill.",
		set: intFlag(func(c *Config) *int { return &c.ChunkedPrefillSize })},
	{names: []string{"max-prefill-tokens"}, help: "The maximum number of tokens in a prefill batch. The real bound will be the maximum of this value and the model's maximum context length.",
		set: intFlag(nil)},
	{names: []string{"schedule-policy"}, help: "The scheduling policy of the requests."},
	{names: []string{"enable-mixed-chunk"}, kind: kindBool, help: "Enabling mixing prefill and decode in a batch when using chunked prefill."},
	{names: []string{"page-size"}, help: "The number of tokens in a page.", set: posIntFlag(func(c *Config) *int { return &c.PageSize })},
	{names: []string{"disable-radix-cache"}, kind: kindBool, help: "Disable RadixAttention for prefix caching.",
		set: boolFlag(func(c *Config) *bool { return &c.DisableRadixCache })},
	{names: []string{"enable-hierarchical-cache"}, kind: kindBool, help: "Enable hierarchical cache"},
	{names: []string{"hicache-ratio"}, help: "The ratio of the size of host KV cache memory pool to the size of device pool.", set: floatFlag(nil)},
	{names: []string{"disable-overlap-schedule"}, kind: kindBool, help: "Disable the overlap scheduler, which overlaps the CPU scheduler with GPU model worker.",
		set: boolFlag(func(c *Config) *bool { return &c.DisableOverlapSchedule })},
	{names: []string{"random-seed"}, help: "The random seed.", set: intFlag(nil)},
	{names: []string{"stream-interval"}, help: "The interval (or buffer size) for streaming in terms of the token length. A smaller value makes streaming smoother, while a larger value makes the throughput higher",
		set: posIntFlag(func(c *Config) *int { return &c.StreamInterval })},
	{names: []string{"watchdog-timeout"}, help: "Set watchdog timeout in seconds. If a forward batch takes longer than this, the server will crash to prevent hanging.",
		set: func(c *Config, v string) error {
			d, err := secondsValue(v, "float")
			c.Deploy.WatchdogTimeout, c.Deploy.WatchdogGiven = d, true
			return err
		}},
	{names: []string{"log-level"}, help: "The logging level of all loggers.", set: strFlag(func(c *Config) *string { return &c.LogLevel })},
	{names: []string{"log-level-http"}, help: "The logging level of HTTP server. If not set, reuse --log-level by default."},
	{names: []string{"log-requests"}, kind: kindBool, help: "Log metadata, inputs, outputs of all requests. The verbosity is decided by --log-requests-level"},
	{names: []string{"enable-metrics"}, kind: kindBool, help: "Enable log prometheus metrics.",
		set: boolFlag(func(c *Config) *bool { return &c.EnableMetrics })},
	{names: []string{"enable-cache-report"}, kind: kindBool, help: "Return number of cached tokens in usage.prompt_tokens_details for each openai request.",
		set: boolFlag(func(c *Config) *bool { return &c.EnableCacheReport })},
	{names: []string{"decode-log-interval"}, help: "The log interval of decode batch.", set: intFlag(nil)},
	{names: []string{"dist-timeout"}, help: "Set timeout for torch.distributed initialization.",
		set: func(c *Config, v string) error {
			d, err := secondsValue(v, "int")
			c.Deploy.DistTimeout = d
			return err
		}},
	{names: []string{"dist-init-addr", "nccl-init-addr"}, help: "The host address for initializing distributed backend (e.g., `192.168.0.2:25000`).",
		set: strFlag(func(c *Config) *string { return &c.Deploy.DistInitAddr })},
	{names: []string{"nnodes"}, help: "The number of nodes.", set: intFlag(func(c *Config) *int { return &c.Deploy.NNodes })},
	{names: []string{"node-rank"}, help: "The node rank.", set: intFlag(func(c *Config) *int { return &c.Deploy.NodeRank })},
	{names: []string{"tp-size", "tensor-parallel-size"}, help: "The tensor parallelism size.",
		set: intFlag(func(c *Config) *int { return &c.TP })},
	{names: []string{"pp-size", "pipeline-parallel-size"}, help: "The pipeline parallelism size.", set: intFlag(nil)},
	{names: []string{"dp-size", "data-parallel-size"}, help: "The data parallelism size.", set: intFlag(nil)},
	{names: []string{"enable-dp-attention"}, kind: kindBool, help: "Enabling data parallelism for attention and tensor parallelism for FFN. The dp size should be equal to the tp size. Currently DeepSeek-V2 and Qwen 2/3 MoE models are supported.",
		set: boolFlag(func(c *Config) *bool { return &c.EnableDPAttention })},
	{names: []string{"ep-size", "expert-parallel-size", "ep"}, help: "The expert parallelism size.", set: intFlag(nil)},
	{names: []string{"speculative-algorithm"}, help: "Speculative algorithm. Builtins: EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH, DSPARK, UNO. Or any name registered via `SpeculativeAlgorithm.register`.",
		set: strFlag(func(c *Config) *string { return &c.SpecAlgorithm })},
	{names: []string{"speculative-draft-model-path", "speculative-draft-model"}, help: "The path of the draft model weights. This can be a local folder or a Hugging Face repo ID.",
		set: strFlag(func(c *Config) *string { return &c.DraftModelPath })},
	{names: []string{"speculative-num-steps"}, help: "The number of steps sampled from draft model in Speculative Decoding.",
		set: intFlag(func(c *Config) *int { return &c.SpecSteps })},
	{names: []string{"speculative-eagle-topk"}, help: "The number of tokens sampled from the draft model in eagle2 each step.",
		set: intFlag(func(c *Config) *int { return &c.SpecTopK })},
	{names: []string{"speculative-num-draft-tokens"}, help: "The number of tokens sampled from the draft model in Speculative Decoding.",
		set: intFlag(func(c *Config) *int { return &c.SpecDraftTokens })},
	{names: []string{"attention-backend"}, choices: attentionBackendChoices, help: "Choose the kernels for attention layers.",
		set: strFlag(func(c *Config) *string { return &c.AttentionBackend })},
	{names: []string{"sampling-backend"}, choices: samplingBackendChoices, help: "Choose the kernels for sampling layers."},
	{names: []string{"moe-runner-backend"}, choices: moeRunnerBackendChoices, help: "Choose the runner backend for MoE."},
	{names: []string{"cuda-graph-backend-decode"}, choices: cudaGraphBackendChoices, help: "Backend for the decode phase. Folds into cuda_graph_config[decode].backend.",
		set: strFlag(func(c *Config) *string { return &c.CudaGraphBackendDecode })},
	{names: []string{"cuda-graph-backend-prefill"}, choices: cudaGraphBackendChoices, help: "Backend for the prefill phase. Folds into cuda_graph_config[prefill].backend."},
	{names: []string{"cuda-graph-max-bs-decode"}, help: "Maximum batch size captured for the decode cuda graph.",
		set: intFlag(func(c *Config) *int { return &c.CudaGraphMaxBS })},
	{names: []string{"cuda-graph-max-bs-prefill"}, help: "Maximum batch size captured for the prefill cuda graph.", set: intFlag(nil)},
	{names: []string{"cuda-graph-bs-decode"}, kind: kindList, help: "Explicit list of batch sizes to capture for the decode cuda graph.", set: intFlag(nil)},
	{names: []string{"cuda-graph-bs-prefill"}, kind: kindList, help: "Explicit list of batch sizes to capture for the prefill cuda graph.", set: intFlag(nil)},
	{names: []string{"disable-prefill-cuda-graph"}, kind: kindBool, help: "Disable the prefill-phase CUDA graph. Convenience for --cuda-graph-backend-prefill=disabled."},
	{names: []string{"disable-decode-cuda-graph"}, kind: kindBool, help: "Disable the decode-phase CUDA graph. Convenience for --cuda-graph-backend-decode=disabled.",
		set: boolFlag(func(c *Config) *bool { return &c.DisableDecodeCudaGraph })},
	{names: []string{"enable-torch-compile"}, kind: kindBool, help: "Optimize the model with torch.compile. Experimental feature."},
	{names: []string{"disable-custom-all-reduce"}, kind: kindBool, help: "Disable the custom all-reduce kernel and fall back to NCCL.",
		set: boolFlag(func(c *Config) *bool { return &c.DisableCustomAR })},
	{names: []string{"enable-torch-symm-mem"}, kind: kindBool, help: "Enable using torch symm mem for all-reduce kernel and fall back to NCCL. Only supports CUDA device SM90 and above. SM90 supports world size 4, 6, 8. SM100 supports world size 6, 8."},
	{names: []string{"enforce-disable-flashinfer-allreduce-fusion"}, kind: kindBool, help: "Enforce disable FlashInfer allreduce fusion.",
		set: boolFlag(func(c *Config) *bool { return &c.EnforceDisableFusion })},
	{names: []string{"flashinfer-allreduce-fusion-backend"}, choices: fusionBackendChoices,
		help: "Enable FlashInfer allreduce fusion and choose backend. Requires SM90 or SM10X NVIDIA GPUs. Defaults to auto. " +
			"'auto': choose mnnvl on Blackwell (SM100/SM103) systems (single- and multi-node) and trtllm on SM90 single-node systems. " +
			"'trtllm': available on single-node systems only. 'mnnvl': available on SM90 single-node systems and SM100/SM103 single-node or multi-node systems via MNNVL fabric. " +
			"'cutedsl': Blackwell-only bf16 MNNVL CuTe DSL backend; also fuses the MoE finalize and the shared-expert add into the collective when the MoE runner can defer them. " +
			"Fuses allreduce with Residual + RMSNorm for supported MoE models.",
		set: strFlag(func(c *Config) *string { return &c.FusionBackend })},
	{names: []string{"disaggregation-mode"}, choices: disaggModeChoices,
		help: `Only used for PD disaggregation. "prefill" for prefill-only server, and "decode" for decode-only server. If not specified, it is not PD disaggregated`,
		set:  strFlag(func(c *Config) *string { return &c.Deploy.Disagg })},
	{names: []string{"disaggregation-transfer-backend"}, choices: disaggTransferBackendChoices, help: "The backend for disaggregation transfer. Default is mooncake."},
	{names: []string{"disaggregation-bootstrap-port"}, help: "Bootstrap server port on the prefill server. Default is 8998.",
		set: intFlag(func(c *Config) *int { return &c.Deploy.BootstrapPort })},
	{names: []string{"disaggregation-ib-device"}, help: "The InfiniBand devices for disaggregation transfer. Default is None, which triggers automatic device detection when mooncake backend is enabled."},
	{names: []string{"tool-call-parser"}, help: "Specify the parser for handling tool-call interactions. Use 'auto' to detect from chat template."},
	{names: []string{"reasoning-parser"}, help: "Specify the parser for reasoning models. Use 'auto' to detect from chat template."},

	// SGLang's deprecated registrations, last in its add_cli_args: each
	// still works, and warns when parsed (the fusion flag when the server
	// args are resolved; see resolve.go).
	{names: []string{"cuda-graph-max-bs"}, dest: "cuda_graph_max_bs_decode", replacement: "--cuda-graph-max-bs-decode",
		help: "Deprecated alias for --cuda-graph-max-bs-decode.", set: intFlag(func(c *Config) *int { return &c.CudaGraphMaxBS })},
	{names: []string{"cuda-graph-bs"}, kind: kindList, dest: "cuda_graph_bs_decode", replacement: "--cuda-graph-bs-decode",
		help: "Deprecated alias for --cuda-graph-bs-decode.", set: intFlag(nil)},
	{names: []string{"disable-cuda-graph"}, kind: kindBool, replacement: "--cuda-graph-backend-{decode,prefill}=disabled",
		help: "Deprecated. Use --cuda-graph-backend-{decode,prefill}=disabled instead.",
		set:  boolFlag(func(c *Config) *bool { return &c.DisableCudaGraph })},
	{names: []string{"enable-flashinfer-allreduce-fusion"}, kind: kindBool,
		help: "(Deprecated: use --flashinfer-allreduce-fusion-backend=auto) Enable FlashInfer allreduce fusion with Residual RMSNorm.",
		set:  boolFlag(func(c *Config) *bool { return &c.EnableFusionDeprecated })},
}

// simFlags are the sim's own knobs (docs/SIM.md). Their help says "sim:" so
// that a reader of --help tells them from SGLang's.
var simFlags = []flagSpec{
	{names: []string{"sim-speed"}, metavar: "X", help: "sim: run simulated time X times faster (default 1)", set: func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return fmt.Errorf("invalid positive float value: '%s'", v)
		}
		c.Sim.Speed = f
		return nil
	}},
	{names: []string{"sim-load-time"}, metavar: "D", help: "sim: simulated load time (default 20s; wall time D/X)",
		set: durFlag(func(c *Config) *time.Duration { return &c.Sim.LoadTime })},
	{names: []string{"sim-seed"}, metavar: "N", help: "sim: seed of the noise and accept lengths (default: fresh), mixed with $BAKEOFF_LAUNCH and $BAKEOFF_ROUND if set",
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("invalid int value: '%s'", v)
			}
			c.Sim.Seed, c.Sim.SeedSet = n, true
			return nil
		}},
	{names: []string{"sim-slowdown"}, metavar: "F", help: "sim: multiply every step time by F (default 1)",
		set: floatFlag(func(c *Config) *float64 { return &c.Sim.Slowdown })},
	{names: []string{"sim-noise"}, metavar: "F", help: "sim: relative noise sigma of each step (default 0.02)",
		set: floatFlag(func(c *Config) *float64 { return &c.Sim.Noise })},
	{names: []string{"sim-launch-sigma"}, metavar: "F", help: "sim: sigma of the log of a step-time factor drawn once per launch from the seed (default 0)",
		set: nonNegFloatFlag(func(c *Config) *float64 { return &c.Sim.LaunchSigma })},
	{names: []string{"sim-drift"}, metavar: "F", help: "sim: sigma of a slow drift in the log of step time, an Ornstein-Uhlenbeck process (default 0)",
		set: nonNegFloatFlag(func(c *Config) *float64 { return &c.Sim.Drift })},
	{names: []string{"sim-drift-tau"}, metavar: "D", help: "sim: the drift's correlation time, simulated (default 1m)", set: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("invalid positive duration value: '%s'", v)
		}
		c.Sim.DriftTau = d
		return nil
	}},
	{names: []string{"sim-drift-scope"}, choices: []string{"launch", "host"},
		help: "sim: whose drift it is: each launch's own (default) or the host's, shared by every server on the same --sim-state",
		set:  func(c *Config, v string) error { c.Sim.HostDrift = v == "host"; return nil }},
	{names: []string{"sim-prefix-cache"}, kind: kindBool, help: "sim: model SGLang's radix cache (off by default)",
		set: boolFlag(func(c *Config) *bool { return &c.Sim.PrefixCache })},
	{names: []string{"sim-gpus"}, metavar: "N", help: "sim: GPUs this server may use (default: the tp size over --nnodes)",
		set: intFlag(func(c *Config) *int { return &c.Sim.GPUs })},
	{names: []string{"sim-state"}, metavar: "DIR", help: "sim: the memory registry the fake nvidia-smi reads (default $BAKEOFF_SIM_STATE or $TMPDIR/bakeoff-sim-state-UID)",
		set: strFlag(func(c *Config) *string { return &c.Sim.StateDir })},
	{names: []string{"sim-fault"}, metavar: "NAME[=ARG]", help: "sim: die-during-load, hang-during-load, crash-on-first-request, crash-after=N, ignore-sigterm=D, hold-memory=D, orphan-children, wrong-output, close-after-stream, idle-close=D (repeatable; durations are wall time)",
		set: func(c *Config, v string) error { return c.Sim.Faults.Add(v) }},
	// How the server process tells a scheduler child who it is: not for users.
	{names: []string{"sim-child-rank"}, hidden: true, set: intFlag(func(c *Config) *int { return &c.Sim.ChildRank })},
	{names: []string{"sim-parent-pid"}, hidden: true, set: intFlag(func(c *Config) *int { return &c.Sim.ParentPID })},
	{names: []string{"sim-parent-start"}, hidden: true, set: func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s'", v)
		}
		c.Sim.ParentStart = n
		return nil
	}},
}

// helpFlag is argparse's own -h/--help, first in every parser.
var helpFlag = flagSpec{names: []string{"h", "help"}, kind: kindHelp, help: "show this help message and exit"}

// flagTable is every action in the parser's order: help, SGLang's, the sim's.
var flagTable = func() []*flagSpec {
	out := []*flagSpec{&helpFlag}
	for _, list := range [][]flagSpec{sglangFlags, simFlags} {
		for i := range list {
			list[i].sim = list[i].sim || strings.HasPrefix(list[i].names[0], "sim-")
			out = append(out, &list[i])
		}
	}
	return out
}()

// optionIndex maps every option string ("--tp-size", "-h") to its action.
var optionIndex = func() map[string]*flagSpec {
	m := map[string]*flagSpec{}
	for _, f := range flagTable {
		for _, o := range f.optionStrings() {
			if _, dup := m[o]; dup {
				panic("sim: option " + o + " registered twice")
			}
			m[o] = f
		}
	}
	return m
}()
