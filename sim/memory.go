package sim

// The fake GPUs and what one tensor-parallel rank holds on its GPU while it
// loads and serves.
const (
	// GPUName and GPUTotalMiB describe each fake GPU (the seeds' host).
	GPUName     = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
	GPUTotalMiB = 97887
	// DriverVersion is what the fake nvidia-smi reports.
	DriverVersion = "580.95.05"
	// DefaultGPUs is the fake host's GPU count without BAKEOFF_SIM_GPUS.
	DefaultGPUs = 8
	// idleGPUMiB is what an idle GPU reads (drivers report a little).
	idleGPUMiB = 2

	cudaContextMiB = 530
	// modelWeightsMiB is the whole model (547 GiB, the seeds' Kimi-K2.5
	// INT4); a rank holds 1/tp of it, at most maxWeightShare of its GPU so
	// that small manual runs still fit.
	modelWeightsMiB = 560128
	maxWeightShare  = 0.70
	draftWeightsMiB = 1210
	cudaGraphMiB    = 1480
	maxWeightMiB    = int(maxWeightShare*GPUTotalMiB*100) / 100
)

// Load milestones, as fractions of --sim-load-time.
const (
	fracWeightsBegin = 0.02
	fracWeightsEnd   = 0.70
	fracKVAlloc      = 0.74
	fracGraphBegin   = 0.78
	fracGraphEnd     = 0.95
)

// rankWeightsMiB is the weights one rank loads (draft model included).
func rankWeightsMiB(c *Config) int {
	w := min(modelWeightsMiB/c.TP, maxWeightMiB)
	if c.Speculative() {
		w += draftWeightsMiB
	}
	return w
}

// staticMiB is the memory pool SGLang reserves: mem-fraction-static of the GPU.
func staticMiB(c *Config) int { return int(c.MemFractionStatic * GPUTotalMiB) }

// kvCacheMiB is what is left of the static pool for the KV cache; negative
// when the weights do not fit (the server then fails to load).
func kvCacheMiB(c *Config) int { return staticMiB(c) - rankWeightsMiB(c) }

// rankMemoryMiB is a rank's GPU memory at load fraction frac (≥1: serving).
func rankMemoryMiB(c *Config, frac float64) int {
	m := cudaContextMiB
	switch {
	case frac < fracWeightsBegin:
		return m
	case frac < fracWeightsEnd:
		return m + int(float64(rankWeightsMiB(c))*(frac-fracWeightsBegin)/(fracWeightsEnd-fracWeightsBegin))
	case frac < fracKVAlloc:
		return m + rankWeightsMiB(c)
	case frac < fracGraphBegin:
		return m + staticMiB(c)
	case frac < fracGraphEnd:
		return m + staticMiB(c) + int(cudaGraphMiB*(frac-fracGraphBegin)/(fracGraphEnd-fracGraphBegin))
	default:
		return m + staticMiB(c) + cudaGraphMiB
	}
}
