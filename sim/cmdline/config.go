package cmdline

import (
	"net"
	"strconv"
	"time"
)

// Defaults of SGLang's flags that the simulation reads, and of the sim's own
// knobs. Durations are simulated time unless said otherwise.
const (
	DefaultHost               = "127.0.0.1"
	DefaultPort               = 30000
	DefaultTP                 = 1
	DefaultMemFractionStatic  = 0.88
	DefaultCudaGraphMaxBS     = 160
	DefaultChunkedPrefillSize = 8192
	DefaultContextLength      = 262144
	DefaultSpecSteps          = 3
	DefaultSpecTopK           = 1
	// SpecMaxRunningRequests is the cap SGLang applies to speculative runs
	// when --max-running-requests is not given.
	SpecMaxRunningRequests = 48
	// DefaultMaxRunningRequests is the cap of a non-speculative run without
	// --max-running-requests (SGLang derives it from the KV cache; the sim
	// uses a fixed value that is never the bottleneck of a campaign).
	DefaultMaxRunningRequests = 1024

	// DefaultCachePage is the prefix cache's match granularity in tokens
	// when --page-size is not given. SGLang's default page size is 1; the
	// sim's is 16 (64 bytes of text) so that prompts that merely begin with
	// the same few words ("What is the …") do not count as cache hits, and a
	// campaign that never repeats a prefix sees none. --page-size 1 matches
	// token by token, as SGLang does by default.
	DefaultCachePage = 16

	DefaultSpeed    = 1.0
	DefaultLoadTime = 20 * time.Second
	DefaultNoise    = 0.02
	DefaultSlowdown = 1.0
	// SimRunFactorEnv names a factor every step time of every server
	// started with it is multiplied by, over its --sim-slowdown: a run
	// effect a test imposes on a whole campaign at once (engine.env), as a
	// night's host state moves all of a run's launches alike.
	SimRunFactorEnv = "BAKEOFF_SIM_RUN_FACTOR"
	// LaunchEnv and RoundEnv name one launch of a campaign: the orchestrator
	// starts every server with them (orchestrator.EnvLaunch, EnvRound).
	LaunchEnv = "BAKEOFF_LAUNCH"
	RoundEnv  = "BAKEOFF_ROUND"
	// SpecV2Env is the switch older SGLang builds read for the spec-v2
	// overlap worker. SGLang as the sim follows it removed it (speculative
	// decoding always runs that worker) and warns when it is set.
	SpecV2Env = "SGLANG_ENABLE_SPEC_V2"
)

// Config is a parsed `bakeoff sim` command line.
type Config struct {
	ModelPath       string
	ServedModelName string
	Host            string
	Port            int
	TP              int

	SpecAlgorithm   string // "" when not speculative
	DraftModelPath  string
	SpecSteps       int
	SpecTopK        int
	SpecDraftTokens int // 0 when not given
	// SpecAdaptive is --speculative-adaptive and SpecAdaptiveConfig its
	// --speculative-adaptive-config file ("" for SGLang's default); Adaptive
	// is what the server runs of it (adaptive.go), nil when SGLang keeps
	// static speculative params.
	SpecAdaptive       bool
	SpecAdaptiveConfig string
	Adaptive           *AdaptivePlan
	// DisableOverlapSchedule is --disable-overlap-schedule: speculative
	// decoding then runs the synchronous path instead of the overlap worker
	// (see Overlap).
	DisableOverlapSchedule bool

	// CudaGraphMaxBS is --cuda-graph-max-bs-decode (or its deprecated alias
	// --cuda-graph-max-bs): decode batches above it run without a graph.
	CudaGraphMaxBS int
	// The decode graph is off with any of these (see DecodeGraphMaxBS).
	CudaGraphBackendDecode string
	DisableDecodeCudaGraph bool
	DisableCudaGraph       bool

	MaxRunningRequests int // 0 when not given
	AttentionBackend   string
	DisableCustomAR    bool
	EnableDPAttention  bool

	// FlashInfer allreduce fusion (fusion.go): the backend asked for ("" for
	// none), the deprecated boolean that asks for "auto", and the switch
	// that keeps it off.
	FusionBackend          string
	EnableFusionDeprecated bool
	EnforceDisableFusion   bool

	EnableMetrics      bool
	MemFractionStatic  float64
	ContextLength      int
	ChunkedPrefillSize int
	// StreamInterval is SGLang's --stream-interval: a streaming request's
	// tokens go out every this many decode steps (and the first token and
	// the last at once), so a chunk carries several tokens when it is above 1.
	StreamInterval int
	LogLevel       string

	// The prefix cache (on with --sim-prefix-cache, Sim.PrefixCache).
	// DisableRadixCache is --disable-radix-cache, which wins;
	// MaxTotalTokens is --max-total-tokens, the KV pool in tokens (0: the
	// sim's KVCacheTokens), which also bounds the cache; PageSize is
	// --page-size (0: DefaultCachePage); EnableCacheReport is
	// --enable-cache-report, which puts the cached tokens in the OpenAI
	// responses' usage.
	DisableRadixCache bool
	MaxTotalTokens    int
	PageSize          int
	EnableCacheReport bool

	// Given holds every SGLang flag given (argparse's dest → value, "true"
	// for a bare flag, a list's values joined by spaces), for /server_info
	// and the server_args log line.
	Given map[string]string

	// ParseWarnings are the lines SGLang's parser prints as it reads
	// deprecated aliases (bare, before logging is set up); Notices are the
	// warnings it logs while resolving the server args. Run writes both.
	ParseWarnings []string
	Notices       []string

	// startup is an exception SGLang raises while it builds its server args
	// (StartupError), nil when none.
	startup error

	// Deploy is where this process stands in a deployment of several
	// (deploy.go): a node of a multi-node group, a prefill or decode worker.
	Deploy Deployment

	Sim SimOptions
}

// SimOptions are the sim's own knobs (--sim-…).
type SimOptions struct {
	// Speed makes all simulated time pass Speed times faster in wall time.
	Speed float64
	// LoadTime is the simulated weight-loading and warm-up time.
	LoadTime time.Duration
	// Seed seeds the noise and accept-length draws; SeedSet is false when it
	// was not given, and then a fresh seed is drawn so repeated runs differ.
	// When the orchestrator names the launch (LaunchEnv, RoundEnv), Seed is
	// --sim-seed mixed with it, so that one --sim-seed in a campaign still
	// draws another launch factor in every launch; SeedMix says what was
	// mixed in ("" when nothing was).
	Seed    int64
	SeedSet bool
	SeedMix string
	// Slowdown multiplies every step time (1.05 is a truly 5% slower engine).
	Slowdown float64
	// Noise is the relative standard deviation of each step's time.
	Noise float64
	// DraftAccept is the probability that the drafter's top-1 guess for a
	// draft position is accepted (0: the model's default, the seeds'
	// Kimi-K2.5 drafter); a tree accepts more (model.acceptProb).
	DraftAccept float64
	// LaunchSigma is σ of the log of a step-time factor drawn once per
	// launch; Drift the stationary σ of the log of a slow Ornstein–Uhlenbeck
	// factor with correlation time DriftTau (simulated time; 0 means
	// DefaultDriftTau). See LaunchNoise.
	LaunchSigma float64
	Drift       float64
	DriftTau    time.Duration
	// HostDrift makes the drift the host's (--sim-drift-scope host): one
	// path in wall-clock time for every server on the same --sim-state,
	// carrying on from launch to launch, instead of a path per launch.
	HostDrift bool
	// PrefixCache turns the prefix cache on (--sim-prefix-cache). SGLang
	// runs its radix cache unless --disable-radix-cache; the sim models it
	// only when asked, so that campaigns measured before it keep their
	// figures: the demo repeats its builtin prompts within a level from C=30
	// on, and a cache would shorten those requests' prefill.
	PrefixCache bool
	// GPUs is how many GPUs the fake host has for this server (default: TP),
	// at most as many as CUDA_VISIBLE_DEVICES lets it see.
	GPUs int
	// Visible is the host's GPUs CUDA_VISIBLE_DEVICES lets the server see,
	// in its order (device 0 first); nil when the variable is unset, and
	// empty when it names no GPU of the host (visible.go).
	Visible []int
	// StateDir is where memory holders register for the fake nvidia-smi.
	StateDir string
	// ComputeCap is the simulated GPUs' compute capability ("12.0"), from
	// BAKEOFF_SIM_COMPUTE_CAP (package gpu).
	ComputeCap string
	Faults     Faults

	// ChildRank and ParentPID are set only in a scheduler child process.
	ChildRank int // -1 in the server process
	ParentPID int
	// ParentStart is when the server process started (Unix ns), so that a
	// child started late still follows the server's load timeline.
	ParentStart int64
}

// Speculative reports whether a speculative algorithm is configured.
func (c *Config) Speculative() bool { return c.SpecAlgorithm != "" }

// ModelName is the id the server answers with: --served-model-name or the
// model path.
func (c *Config) ModelName() string {
	if c.ServedModelName != "" {
		return c.ServedModelName
	}
	return c.ModelPath
}

// RunningCap is the most requests decoded at once and whether it is SGLang's
// speculative reset to 48 (which the server logs as a warning).
func (c *Config) RunningCap() (n int, specReset bool) {
	switch {
	case c.MaxRunningRequests > 0:
		return c.MaxRunningRequests, false
	case c.Speculative():
		return SpecMaxRunningRequests, true
	default:
		return DefaultMaxRunningRequests, false
	}
}

// Overlap reports whether speculative decoding runs SGLang's overlap
// worker (the spec-v2 worker, the only one current SGLang has): always,
// unless --disable-overlap-schedule selects the synchronous path.
func (c *Config) Overlap() bool { return c.Speculative() && !c.DisableOverlapSchedule }

// DecodeGraphMaxBS is the largest decode batch that runs on a CUDA graph: 0
// when the decode graph is off (--cuda-graph-backend-decode disabled,
// --disable-decode-cuda-graph, or the deprecated --disable-cuda-graph).
func (c *Config) DecodeGraphMaxBS() int {
	if c.CudaGraphBackendDecode == "disabled" || c.DisableDecodeCudaGraph || c.DisableCudaGraph {
		return 0
	}
	return c.CudaGraphMaxBS
}

// DraftTokens is the number of tokens verified per request per step: as
// given, except that topk 1 forces steps+1 as SGLang does.
func (c *Config) DraftTokens() int {
	if !c.Speculative() {
		return 1
	}
	if c.SpecTopK <= 1 || c.SpecDraftTokens <= 0 {
		return c.SpecSteps + 1
	}
	return c.SpecDraftTokens
}

// Addr is the host:port the server listens on.
func (c *Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// TotalTokens is the KV pool in tokens (SGLang's max_total_num_tokens):
// --max-total-tokens, else the sim's KVCacheTokens. It bounds the prefix
// cache and is the denominator of token usage.
func (c *Config) TotalTokens() int {
	if c.MaxTotalTokens > 0 {
		return c.MaxTotalTokens
	}
	return KVCacheTokens
}

// CachePage is the prefix cache's page in tokens: --page-size, else
// DefaultCachePage.
func (c *Config) CachePage() int {
	if c.PageSize > 0 {
		return c.PageSize
	}
	return DefaultCachePage
}

// CacheOn reports whether the prefix cache runs: --sim-prefix-cache and not
// --disable-radix-cache, and never on a decode worker, whose prompts arrive
// as transferred KV (SGLang's decode radix cache is off unless
// --disaggregation-decode-enable-radix-cache).
func (c *Config) CacheOn() bool {
	return c.Sim.PrefixCache && !c.DisableRadixCache && !c.Deploy.Decode()
}

// KVCacheTokens is the KV-cache capacity the sim reports (max_total_num_tokens)
// unless --max-total-tokens sets it (Config.TotalTokens): the denominator of
// token usage and the prefix cache's capacity.
const KVCacheTokens = 1_204_224
