package campaign

import (
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// GPUs is the number of GPUs one launch of the scenario holds, which the
// verdict divides its throughput by when scenarios hold different numbers
// (docs/METHOD.md, "Per GPU"). For a scenario of one server it is, in order:
//
//   - `gpus:` as written (or inherited), which wins over everything below;
//   - the engine's parallelism flags multiplied (parallelismOf), for the
//     engines that have them: SGLang, vLLM and TensorRT-LLM, each flag 1
//     when not given;
//   - the devices listed in the scenario's CUDA_VISIBLE_DEVICES, for an
//     engine without such flags (llama.cpp spreads a model over every GPU it
//     sees; a generic server);
//   - 1.
//
// A scenario made of several servers (roles) holds the sum over them: each
// role's count times its GPUs, each role's GPUs found as above.
func (s *Scenario) GPUs() int {
	if s.Deployment != nil {
		return s.Deployment.GPUs(s)
	}
	if s.GPUCount > 0 {
		return s.GPUCount
	}
	if n, ok := parallelismOf(s); ok {
		return n
	}
	if n := visibleDevices(s.Env[cudaVisibleDevices]); n > 0 {
		return n
	}
	return 1
}

// GPUCounts is GPUs() of every scenario, by name, as the run's manifest
// records it; nil for a campaign on hosts without a GPU (gpu: none), where
// no figure is per GPU.
func (c *Campaign) GPUCounts() map[string]int {
	if c.GPU.None {
		return nil
	}
	out := make(map[string]int, len(c.Scenarios))
	for _, s := range c.Scenarios {
		out[s.Name] = s.GPUs()
	}
	return out
}

// cudaVisibleDevices is the variable that limits the GPUs a CUDA process
// sees: a comma-separated list of indices or UUIDs.
const cudaVisibleDevices = "CUDA_VISIBLE_DEVICES"

// visibleDevices counts the devices a CUDA_VISIBLE_DEVICES value lists; 0
// when it lists none.
func visibleDevices(v string) int {
	n := 0
	for _, d := range strings.Split(v, ",") {
		if strings.TrimSpace(d) != "" {
			n++
		}
	}
	return n
}

// parallelDim is one dimension of an engine's parallelism: the spellings
// of its flag (with '-' for '_', as the scenario's args key may be written
// either way), and a bare flag that, when set, folds the dimension into the
// others so that it adds no GPU.
type parallelDim struct {
	names  []string
	within string
}

// enginesParallelism are the flags whose values multiply into the GPUs one
// server of the engine holds, as each engine's own launcher counts them:
//
//   - SGLang (sgl-project/sglang python/sglang/srt/arg_groups/fields/parallel.py
//     and managers/data_parallel_controller.py, which starts each data
//     parallel rank tp-size × pp-size GPUs after the last): tp × pp × dp,
//     except with enable-dp-attention, where the dp ranks split the attention
//     inside the one tp group and add no GPU;
//   - vLLM (`vllm serve --help`; vllm-project/vllm
//     vllm/benchmarks/sweep/plot_pareto.py counts a run's GPUs the same way):
//     tensor × pipeline × data parallel size;
//   - TensorRT-LLM's trtllm-serve (NVIDIA/TensorRT-LLM
//     tensorrt_llm/commands/serve.py, whose LLM spans tp × pp × cp ranks; its
//     expert parallelism lies inside them).
//
// The short keys (`tp`, `pp`, `dp`) are those an args mapping may use: an
// argparse prefix of SGLang's flags, vLLM's aliases without their one dash.
var enginesParallelism = map[string][]parallelDim{
	engine.SGLang: {
		{names: []string{"tp-size", "tensor-parallel-size", "tp"}},
		{names: []string{"pp-size", "pipeline-parallel-size", "pp"}},
		{names: []string{"dp-size", "data-parallel-size", "dp"}, within: "enable-dp-attention"},
	},
	engine.VLLM: {
		{names: []string{"tensor-parallel-size", "tp"}},
		{names: []string{"pipeline-parallel-size", "pp"}},
		{names: []string{"data-parallel-size", "dp"}},
	},
	engine.TRTLLM: {
		{names: []string{"tp-size", "tensor-parallel-size"}},
		{names: []string{"pp-size", "pipeline-parallel-size"}},
		{names: []string{"cp-size", "context-parallel-size"}},
	},
}

// parallelismOf is the product of the scenario's parallelism flags; ok is
// false for an engine without such flags.
func parallelismOf(s *Scenario) (int, bool) {
	engineName := s.Engine
	if engineName == "" {
		engineName = DefaultEngine
	}
	dims, ok := enginesParallelism[engineName]
	if !ok {
		return 0, false
	}
	n := 1
	for _, d := range dims {
		if d.within != "" && s.flagSet(d.within) {
			continue
		}
		for _, name := range d.names {
			if v, ok := s.flagValue(name); ok {
				if k, err := strconv.Atoi(v); err == nil && k > 0 {
					n *= k
				}
				break
			}
		}
	}
	return n, true
}

// flagValue is the value of the arg whose key, with '_' read as '-', is
// name.
func (s *Scenario) flagValue(name string) (string, bool) {
	for _, a := range s.Args {
		if strings.ReplaceAll(a.Key, "_", "-") == name && len(a.Values) > 0 {
			return a.Values[len(a.Values)-1], true
		}
	}
	return "", false
}

// flagSet reports whether a bare flag named name is set.
func (s *Scenario) flagSet(name string) bool {
	for _, a := range s.Args {
		if strings.ReplaceAll(a.Key, "_", "-") == name {
			return a.Bare || (len(a.Values) > 0 && a.Values[len(a.Values)-1] == "true")
		}
	}
	return false
}
