package sim

import (
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
)

// What one tensor-parallel rank holds on its GPU while it loads and serves,
// from the sizes and milestones of package gpu.

// rankWeightsMiB is the weights one rank loads (draft model included).
func rankWeightsMiB(c *cmdline.Config) int {
	w := min(gpu.ModelWeightsMiB/c.TP, gpu.MaxWeightMiB)
	if c.Speculative() {
		w += gpu.DraftWeightsMiB
	}
	return w
}

// staticMiB is the memory pool SGLang reserves: mem-fraction-static of the GPU.
func staticMiB(c *cmdline.Config) int { return int(c.MemFractionStatic * gpu.GPUTotalMiB) }

// kvCacheMiB is what is left of the static pool for the KV cache; negative
// when the weights do not fit (the server then fails to load).
func kvCacheMiB(c *cmdline.Config) int { return staticMiB(c) - rankWeightsMiB(c) }

// rankMemoryMiB is a rank's GPU memory at load fraction frac (≥1: serving).
func rankMemoryMiB(c *cmdline.Config, frac float64) int {
	m := gpu.CUDAContextMiB
	switch {
	case frac < gpu.FracWeightsBegin:
		return m
	case frac < gpu.FracWeightsEnd:
		return m + int(float64(rankWeightsMiB(c))*(frac-gpu.FracWeightsBegin)/(gpu.FracWeightsEnd-gpu.FracWeightsBegin))
	case frac < gpu.FracKVAlloc:
		return m + rankWeightsMiB(c)
	case frac < gpu.FracGraphBegin:
		return m + staticMiB(c)
	case frac < gpu.FracGraphEnd:
		return m + staticMiB(c) + int(gpu.CUDAGraphMiB*(frac-gpu.FracGraphBegin)/(gpu.FracGraphEnd-gpu.FracGraphBegin))
	default:
		return m + staticMiB(c) + gpu.CUDAGraphMiB
	}
}
