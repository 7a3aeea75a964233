package campaign

import (
	"reflect"
	"testing"
)

// TestScenarioGPUs: a scenario's GPU count is its gpus: key, else its
// engine's parallelism flags multiplied (SGLang's dp folded into tp by
// enable-dp-attention), else its CUDA_VISIBLE_DEVICES for an engine without
// such flags, else 1; a child inherits gpus: and may override it.
func TestScenarioGPUs(t *testing.T) {
	base := func(body string) memFiles {
		return goodFiles.with(memFiles{basePath: "name: base\nmodel: /m\n" + body, specPath: "extends: base\n"})
	}
	for _, tc := range []struct {
		name       string
		files      memFiles
		base, spec int
	}{
		{"sglang's tp, abbreviated, inherited", goodFiles, 2, 2},
		{"sglang with no flag", base(""), 1, 1},
		{"sglang tp × dp", base("args: {tp-size: 4, dp-size: 2}\n"), 8, 8},
		{"sglang tp × pp, long spellings", base("args: {tensor-parallel-size: 4, pipeline-parallel-size: 2}\n"), 8, 8},
		{"sglang dp attention inside tp", base("args: {tp-size: 8, dp-size: 8, enable-dp-attention: true}\n"), 8, 8},
		{"sglang ignores the devices it sees", base("env: {CUDA_VISIBLE_DEVICES: \"0,1,2,3\"}\n"), 1, 1},
		{"vllm tp × dp, underscores", base("engine: vllm\nargs: {tensor_parallel_size: 4, data-parallel-size: 2}\n"), 8, 8},
		{"vllm tp × pp", base("engine: vllm\nargs: {tp: 2, pipeline-parallel-size: 2}\n"), 4, 4},
		{"trtllm tp × pp", base("engine: trtllm\nargs: {tp_size: 4, pp_size: 2}\n"), 8, 8},
		{"llama.cpp on the devices it sees", base("engine: llamacpp\nenv: {CUDA_VISIBLE_DEVICES: \"0, 1,2\"}\n"), 3, 3},
		{"llama.cpp with no devices named", base("engine: llamacpp\n"), 1, 1},
		{"gpus: wins over the flags", base("gpus: 6\nargs: {tp-size: 2}\n"), 6, 6},
		{"a child overrides gpus:", goodFiles.with(memFiles{specPath: "extends: base\ngpus: 3\n"}), 2, 3},
		{"a value that is no number", base("args: {tp-size: \"{workdir}\"}\n"), 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if errs != nil {
				t.Fatal(errs)
			}
			got := c.GPUCounts()
			if want := map[string]int{"base": tc.base, "spec": tc.spec}; !reflect.DeepEqual(got, want) {
				t.Errorf("GPUCounts() = %v, want %v", got, want)
			}
		})
	}
}

// TestScenarioGPUsErrors: gpus: is a whole number of GPUs, at least 1,
// refused at its position otherwise.
func TestScenarioGPUsErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"gpus: 0\n", `c/scenarios/base.yaml:3:7: gpus: must be at least 1, got 0`},
		{"gpus: two\n", `c/scenarios/base.yaml:3:7: gpus: want an integer, got "two"`},
		{"gpus: [0, 1]\n", `c/scenarios/base.yaml:3:7: gpus: want an integer, got a list`},
	} {
		t.Run(tc.body, func(t *testing.T) {
			_, errs := loadMem(t, goodFiles.with(memFiles{basePath: "name: base\nmodel: /m\n" + tc.body}))
			if !reflect.DeepEqual(errs, []string{tc.want}) {
				t.Errorf("errors:\n got: %q\nwant: %q", errs, []string{tc.want})
			}
		})
	}
}

// TestGPUCountsNoGPU: a campaign on hosts without a GPU has no GPU counts,
// so that nothing is divided by a GPU it does not hold.
func TestGPUCountsNoGPU(t *testing.T) {
	c, errs := loadMem(t, top("gpu: none\n"))
	if errs != nil {
		t.Fatal(errs)
	}
	if got := c.GPUCounts(); got != nil {
		t.Errorf("GPUCounts() = %v, want nil", got)
	}
}
