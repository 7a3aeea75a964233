package campaign

import (
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// Defaults for every key a file may leave out. docs/CONFIG.md lists them.
const (
	DefaultEngine     = engine.SGLang
	DefaultPython     = "python3"
	DefaultSSHWorkdir = "/tmp/bakeoff"
	DefaultSweepMode  = SweepOnHost
	// DefaultLinkPatience is how long a host may stay unreachable before
	// a launch (in a fleet: the host) is given up on: long enough for a
	// switch reboot or a VPN renegotiation.
	DefaultLinkPatience   = 15 * time.Minute
	DefaultPort           = 30000
	DefaultHealthPath     = "/health"
	DefaultHealthTimeout  = 30 * time.Minute
	DefaultPollInterval   = 5 * time.Second
	DefaultStopGrace      = 30 * time.Second
	DefaultMaxUsedMiB     = 1024
	DefaultGPUWaitTimeout = 5 * time.Minute
	// DefaultPowerSource samples GPU power with nvidia-smi, which every
	// host the GPU wait works on already has; with gpu: none there is no
	// GPU to sample, and the source is off.
	DefaultPowerSource = PowerNvidiaSMI
	// DefaultPowerInterval is 2 Hz: nvidia-smi's power.draw is itself a
	// one-second average on Ampere and newer boards (NVML's
	// nvmlDeviceGetPowerUsage), so faster sampling adds little but cost.
	DefaultPowerInterval = 500 * time.Millisecond
	// MaxPowerInterval is the longest interval power.interval accepts: a
	// level's steady state of a few seconds still gets several readings.
	MaxPowerInterval      = 2 * time.Second
	DefaultMaxTokens      = 200
	DefaultWarmup         = 5
	DefaultPrompts        = "builtin"
	DefaultOutputLengths  = prompts.OutputMaxTokens
	DefaultTemperature    = 0.0
	DefaultIgnoreEOS      = true
	DefaultEndpoint       = EndpointChat
	DefaultRepeats        = 1
	DefaultSeed           = 1
	DefaultRequestTimeout = 10 * time.Minute
	// DefaultScrapeInterval is how often the sweep reads the server's
	// /metrics for its timeline (loadgen.DefaultScrapeInterval).
	DefaultScrapeInterval = time.Second
	// DefaultRounds is how many times each scenario is launched. One launch
	// per scenario cannot tell a configuration's speed from the luck of its
	// launch; docs/METHOD.md says why this many: under 1% launch noise and
	// drift, six rounds find a 5% slowdown at 99% of levels after the
	// correction for many levels (five: 86%, four: 77%), and six is even (every
	// scenario's mean launch position alike) and a whole period of the launch
	// order for two or three scenarios.
	DefaultRounds = 6
	// DefaultMinEffectPct is the smallest difference, in percent, a verdict
	// names a winner for when launch-to-launch variation was not measured
	// (rounds: 1).
	DefaultMinEffectPct = 5.0
	// DefaultEquivalenceMarginPct is the margin, in percent, within which two
	// configurations count as tied.
	DefaultEquivalenceMarginPct = 2.0
	// LocalWorkdirPrefix names the default workdir for `host: local`:
	// <TMPDIR>/bakeoff-local-<uid>, one per user so two users never share a
	// lock or a pid file.
	LocalWorkdirPrefix = "bakeoff-local-"
)

// Sweep modes for Host.SweepMode.
const (
	SweepOnHost   = "host"   // run `bakeoff sweep` on the GPU host, next to the server
	SweepOverSSH  = "tunnel" // run the load here, through a forwarded port
	launcherHost  = "127.0.0.1"
	maxPort       = 65535
	promptBuiltin = "builtin"
)

// MaxConcurrency bounds a sweep level; a closed-loop level beyond it is a
// typo, and the bound keeps the automatic request count from overflowing.
const MaxConcurrency = 100000

// MaxRate bounds a rate level, requests per second.
const MaxRate = 100000

// MaxBurstiness bounds sweep.burstiness: past it the gaps are as even as
// makes no difference (their coefficient of variation is 1/√burstiness).
const MaxBurstiness = 10000

// MinSequentialRounds is the smallest rounds.min: a look needs two rounds
// for a launch-to-launch variance at all, and the fixed design's three to
// name a winner (docs/METHOD.md).
const MinSequentialRounds = 2

// MaxRounds bounds `rounds`; a campaign of more launches per scenario than
// this is a typo (it would run for weeks on a real host).
const MaxRounds = 1000
