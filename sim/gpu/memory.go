package gpu

// The fake GPUs, and the sizes and load milestones of what one
// tensor-parallel rank holds on its GPU while it loads and serves (the
// rank's memory at a moment is the server's: sim.rankMemoryMiB).
const (
	// GPUName and GPUTotalMiB describe each fake GPU (the seeds' host).
	GPUName     = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
	GPUTotalMiB = 97887
	// DriverVersion is what the fake nvidia-smi reports.
	DriverVersion = "580.95.05"
	// DefaultGPUs is the fake host's GPU count without BAKEOFF_SIM_GPUS.
	DefaultGPUs = 8
	// IdleGPUMiB is what an idle GPU reads (drivers report a little).
	IdleGPUMiB = 2

	CUDAContextMiB = 530
	// ModelWeightsMiB is the whole model (547 GiB, the seeds' Kimi-K2.5
	// INT4); a rank holds 1/tp of it, at most MaxWeightShare of its GPU so
	// that small manual runs still fit.
	ModelWeightsMiB = 560128
	MaxWeightShare  = 0.70
	DraftWeightsMiB = 1210
	CUDAGraphMiB    = 1480
	MaxWeightMiB    = int(MaxWeightShare*GPUTotalMiB*100) / 100
)

// Load milestones, as fractions of --sim-load-time.
const (
	FracWeightsBegin = 0.02
	FracWeightsEnd   = 0.70
	FracKVAlloc      = 0.74
	FracGraphBegin   = 0.78
	FracGraphEnd     = 0.95
)
