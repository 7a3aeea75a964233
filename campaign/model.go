// Package campaign is the model of the files a user writes: scenario files
// (server variants) and campaign files (a host, engine defaults, a sweep and
// the scenarios to compare). It loads them strictly, resolves `extends`,
// checks them, renders launch commands and computes the sweep fingerprint.
package campaign

import (
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
	"github.com/bakeoff-dev/bakeoff/slo"
)

// Campaign is a loaded, resolved and checked campaign file.
type Campaign struct {
	Name string // `campaign`
	File string // path the campaign was loaded from
	Host Host   // where the servers run (with hosts:, the first host of the fleet)
	// Hosts is the fleet of hosts: (each entry with host:'s shared
	// settings); nil with a single host:.
	Hosts     []Host
	Engine    EngineOpts  // defaults for every scenario's server
	GPU       GPUOpts     // the GPU-memory wait between scenarios, or none (no GPU)
	Power     PowerOpts   // the GPU power sampler beside each sweep
	Sweep     Sweep       // the identical load every scenario gets
	Baseline  string      // name of the scenario the others are compared to
	Scenarios []*Scenario // in campaign order, `extends` resolved
	// PromptHash is the content hash of the sweep's prompt set
	// ("sha256:..."), as prompts.Set.Hash computes it.
	PromptHash string
	// Trace is the sweep's trace, read and checked, when it replays one.
	Trace *prompts.Trace
	// Spaces are the scenarios written as a `space:` of configurations,
	// each with what it expanded to; its points are among Scenarios.
	Spaces []*Space `json:",omitempty"`
	// Warnings are non-fatal findings (e.g. an unset max-running-requests on a
	// speculative scenario swept above 48), each prefixed with file:line:col.
	Warnings []string

	// MinRounds, when above 0, makes the rounds sequential: from MinRounds
	// on, a look after each round closes the comparisons that are decided,
	// and a variant whose comparisons are all closed is launched no more;
	// Rounds is then the most. 0: the fixed design, Rounds for everyone.
	MinRounds int
	// Rounds is how many times each scenario is launched (≥1); each round
	// launches every scenario once, in the order LaunchOrder gives.
	Rounds int
	// MinEffectPct is the smallest difference, in percent, a verdict names a
	// winner for when launch-to-launch variation was not measured.
	MinEffectPct float64
	// EquivalenceMarginPct is the margin, in percent, within which two
	// configurations count as tied.
	EquivalenceMarginPct float64
	// VerdictMetrics are the metrics the verdict decides beside throughput
	// (key verdict.metrics), in the campaign's order; nil for throughput
	// alone.
	VerdictMetrics []MetricChoice
	// Question is what the campaign asks (key question): QuestionCompare,
	// each variant against the baseline, or QuestionSelect, the fastest
	// configuration at each level. Empty reads as QuestionCompare.
	Question string
	// Select tunes a selection campaign's race (key select).
	Select Select
	// SLO is the service-level objective (key slo) the verdict measures
	// capacity and goodput under; nil when the campaign has none.
	SLO *slo.SLO
	// LaunchesPerHost is how many launches run side by side on each host
	// (launches_per_host), each in its own Slot of GPUs and ports; 1 when
	// every launch has its host to itself.
	LaunchesPerHost int
	// Budget is how long the campaign may run (key budget), 0 for no
	// limit; Deadline the time of day it must end by (key deadline), nil
	// for none. At most one is set (End).
	Budget   time.Duration
	Deadline *Clock
}

// Host says where servers run. Local is true for `host: local`.
type Host struct {
	Local bool
	// SSH is an alias from ~/.ssh/config or user@host:port.
	SSH     string
	Workdir string // remote directory for logs, pid files, the lock and uploads
	Python  string // interpreter used to launch python engines (default python3)
	// AcceptNew adds an unknown host key to known_hosts on first contact, as
	// OpenSSH's StrictHostKeyChecking=accept-new does. A changed key always fails.
	AcceptNew bool
	// SweepMode is "host" (run the load generator next to the server, the
	// default) or "tunnel" (run it here through an SSH-forwarded port).
	SweepMode string
	// LinkPatience is how long the host may stay unreachable before a
	// launch gives up on it (and, in a fleet, the host is given up on and
	// its round moves to another host).
	LinkPatience time.Duration
	// Slurm, when set (host.slurm), says the servers run on the nodes of a
	// Slurm allocation instead of on SSH; nil otherwise.
	Slurm *SlurmSpec
}

// EngineOpts are server settings shared by every scenario of a campaign.
type EngineOpts struct {
	Port          int
	HealthPath    string        // default /health
	HealthTimeout time.Duration // how long loading may take before the scenario fails
	PollInterval  time.Duration // health poll period
	ReadyLine     string        // log line that also signals readiness (optional)
	StopGrace     time.Duration // SIGTERM → SIGKILL grace period
	// Command, when set, replaces the engine's own launcher (e.g.
	// `python3 -m sglang.launch_server`) for every scenario. The token
	// "{bakeoff}" expands to the bakeoff binary on the host, which is how the
	// demo launches `bakeoff sim` with the scenarios' unchanged SGLang flags.
	Command []string
	// Env is added to every scenario's environment (scenario values win).
	Env map[string]string
	// RoleCommands replace, by role name, the program of a deployment
	// role's own launch (its words before the first --flag), keeping its
	// flags: what Command is to an engine's launcher, for a process such
	// as SGLang's router that no engine profile launches.
	RoleCommands map[string][]string
	// Help, when set, is the command that prints the engine's help, in
	// place of the one the profile derives from the launcher (the
	// launcher, or Command, followed by the profile's help words); the
	// only way to ask an engine: generic server. HelpFormat is the format
	// it prints (engine.HelpFormats); empty: the profile's. HelpOff turns
	// the preflight's check of the flags off (help: off).
	Help       []string
	HelpFormat string
	HelpOff    bool
	// Acknowledge lists preflight findings the campaign runs despite
	// (engine.acknowledge): preflight.AckFusion turns the refusal of
	// FlashInfer allreduce fusion on unsupported GPUs into a warning.
	Acknowledge []string
	// PrefixCache, when set (engine.prefix_cache), says what every
	// scenario's server does about its prefix cache in place of what its
	// engine's profile knows: the way to tell bakeoff about a generic
	// server's. A scenario's own prefix_cache wins.
	PrefixCache *PrefixCache

	roleCommandsAt map[string]position // where each of RoleCommands was written
}

// PrefixCache is what a campaign says of a server's prefix cache: that it
// keeps none (`prefix_cache: none`), or how to clear it before each level,
// by an HTTP call to the server (`reset: POST /path`) or by a shell command
// run where the sweep runs (`reset_command: ...`). Exactly one is set.
type PrefixCache struct {
	None bool
	// Reset is "METHOD /path" (the method may be left out: POST), sent to
	// the server; any 2xx answer clears the cache.
	Reset string
	// ResetCommand is a shell command line; exit status 0 clears it.
	ResetCommand string
}

// String is the setting as the scenario file writes it.
func (p *PrefixCache) String() string {
	switch {
	case p == nil:
		return ""
	case p.None:
		return "none"
	case p.Reset != "":
		return "reset: " + p.Reset
	}
	return "reset_command: " + p.ResetCommand
}

// GPUNone is the value of `gpu:` for a host without a GPU.
const GPUNone = "none"

// GPUOpts controls the wait for free GPU memory before and after a server.
type GPUOpts struct {
	// None says the host has no GPU (gpu: none): no wait for free GPU
	// memory, no GPU facts read and no power sampler; the fields below are
	// then zero.
	None        bool
	MaxUsedMiB  int           // every GPU must be at or under this to count as free
	WaitTimeout time.Duration // how long to wait before failing the scenario
	KillStrays  bool          // kill compute processes still holding memory after the wait
	NvidiaSMI   string        // command to run instead of `nvidia-smi` (optional)
}

// Power sources for PowerOpts.Source.
const (
	PowerNvidiaSMI = "nvidia-smi" // nvidia-smi's own loop (-lms)
	PowerDCGM      = "dcgm"       // dcgmi dmon, where the host has it; else nvidia-smi
	PowerOff       = "off"        // no sampler, no energy figures
)

// PowerOpts is the GPU power sampler that runs on the host beside each
// sweep (docs/METHOD.md, Energy).
type PowerOpts struct {
	Source   string        // PowerNvidiaSMI, PowerDCGM or PowerOff
	Interval time.Duration // between readings
}

// Endpoint names for Sweep.Endpoint.
const (
	EndpointChat        = "chat"
	EndpointCompletions = "completions"
)

// Sweep is the load every scenario gets; everything in it that affects the
// measurement goes into the fingerprint.
type Sweep struct {
	Concurrency []int // closed-loop levels, in order
	// Rates are open-loop levels instead (exactly one of Concurrency and
	// Rates is set): arrival rates in requests per second, in order.
	// Burstiness shapes their arrivals (gamma gaps, 1 is Poisson; see
	// loadgen.Arrivals); 0 means 1.
	Rates      []float64
	Burstiness float64
	// Speeds replay Trace instead (exactly one of Concurrency, Rates and
	// Speeds is set): each level sends every row of the trace at its
	// timestamp divided by the speed. Trace is the absolute path of the
	// JSONL trace, BlockSize the tokens each of its hash ids stands for
	// (prompts.DefaultBlockSize unless given) and TraceHash its content
	// hash (prompts.Trace.Hash), set when the campaign is loaded.
	Speeds    []float64
	Trace     string
	BlockSize int
	TraceHash string
	// TraceRows and TraceSpan are the trace's rows (a speed level's
	// requests) and its span at its own pace, for estimates; TraceOutput
	// the tokens its rows ask for themselves in all (output_length or
	// max_tokens), TraceUnsized the rows that ask for none and so get
	// MaxTokens.
	TraceRows    int
	TraceSpan    time.Duration
	TraceOutput  int
	TraceUnsized int
	// Requests per level; 0 means auto (see RequestsFor).
	Requests  int
	MaxTokens int
	Warmup    int    // requests sent before the first level, not measured
	Prompts   string // "builtin" or the absolute path of a JSONL file (written relative to the config)
	// OutputLengths is prompts.OutputMaxTokens (every request asks for
	// MaxTokens) or prompts.OutputRecorded (each prompt's recorded output
	// length, MaxTokens for prompts without one).
	OutputLengths string
	// Synthetic, when set, replaces the prompt set with a synthetic one
	// drawn from Seed; Prompts is then builtin, its text source.
	Synthetic   *prompts.SyntheticSpec
	Temperature float64 // sampling temperature, 0 for greedy
	IgnoreEOS   bool
	Endpoint    string // chat or completions
	Repeats     int    // how many times each level is run (≥1)
	Seed        int64  // prompt order seed
	// RequestTimeout bounds one request; 0 means the loadgen default.
	RequestTimeout time.Duration
	// UniquePrompts starts every request with a short prefix of its own, so
	// no request shares a cached prefix with another: for engines whose
	// prefix cache bakeoff cannot reset between levels.
	UniquePrompts bool
	// ScrapeInterval is how often the sweep reads the server's /metrics for
	// its timeline. It changes what is read, not the load, so it is not in
	// the fingerprint.
	ScrapeInterval time.Duration
	// Sessions, when set, makes the load multi-turn sessions drawn from
	// Seed over the prompt set (sweep.workload.sessions): the levels count
	// users, or sessions arriving per second.
	Sessions *prompts.SessionSpec
	// Percentiles are the percentiles (0–100) every latency is reported at,
	// ascending; nil means measure.DefaultPercentiles. Not in the
	// fingerprint: they change how the records are read, not one request.
	Percentiles []float64
}

// RequestsFor returns the number of measured requests for concurrency c:
// the configured number, or the `auto` count (measure.RequestsFor).
func (s Sweep) RequestsFor(c int) int { return measure.RequestsFor(s.Requests, c) }

// Levels are the sweep's levels in order: its concurrencies, or its rates.
func (s Sweep) Levels() []measure.Level {
	if len(s.Speeds) > 0 {
		out := make([]measure.Level, len(s.Speeds))
		for i, v := range s.Speeds {
			out[i] = measure.SpeedLevel(v)
		}
		return out
	}
	if len(s.Rates) == 0 {
		out := make([]measure.Level, len(s.Concurrency))
		for i, c := range s.Concurrency {
			out[i] = measure.ConcurrencyLevel(c)
		}
		return out
	}
	out := make([]measure.Level, len(s.Rates))
	for i, r := range s.Rates {
		out[i] = measure.RateLevel(r)
	}
	return out
}

// RequestsAt returns the number of measured requests at a level of either
// kind (measure.RequestsAt).
func (s Sweep) RequestsAt(level measure.Level) int {
	if measure.IsSpeed(level) {
		return s.TraceRows
	}
	return measure.RequestsAt(s.Requests, level)
}

// Mode is "rate" for an open-loop sweep, "concurrency" for a closed loop.
func (s Sweep) Mode() string {
	if len(s.Speeds) > 0 {
		return ModeTrace
	}
	if len(s.Rates) > 0 {
		return ModeRate
	}
	return ModeConcurrency
}

// ArrivalShape is the burstiness of the sweep's arrivals: Burstiness, or 1
// (Poisson) when unset.
func (s Sweep) ArrivalShape() float64 {
	if s.Burstiness == 0 {
		return 1
	}
	return s.Burstiness
}

// Sweep modes (Sweep.Mode).
const (
	ModeConcurrency = "concurrency"
	ModeRate        = "rate"
)

// Scenario is one server variant after `extends` is resolved.
type Scenario struct {
	Name        string
	Description string
	Extends     string // as written; already applied to the fields below
	Engine      string // a name package engine knows: sglang, vllm, llamacpp, trtllm or generic
	Model       string
	// Args are the engine flags in a stable order (sorted by key), already
	// merged with the parent's; false/null values have been removed.
	Args []Arg
	Env  map[string]string
	// Launch, when set, replaces the whole launch command for this scenario.
	Launch []string
	// Deployment, when set, makes the scenario several processes (roles)
	// launched, watched and stopped as one; the fields above are what its
	// roles start from (Scenario.RoleScenario). Nil for one server.
	Deployment *Deployment
	// PrefixCache is the scenario's `prefix_cache:` (or its parent's); nil:
	// the campaign's engine.prefix_cache, else the engine profile's reset.
	PrefixCache *PrefixCache
	// GPUCount is `gpus:` as written (or inherited): the GPUs the server
	// uses, for the per-GPU figures; 0 when not written, and GPUs() reads
	// the count from the engine's flags.
	GPUCount int
	File     string // the file the scenario came from

	src *scenarioSrc // where each value was written; nil when built in code
	// space is the scenario's `space:` (or its parent's) until the
	// campaign expands it into points; nil for a point and for a
	// scenario without one.
	space *space
}

// Arg is one engine flag. Values holds the rendered values: none for a bare
// boolean flag, one for a scalar, several for a list (the flag is repeated).
type Arg struct {
	Key    string
	Values []string
	Bare   bool
}

// Profile is the scenario's engine profile (the default engine's when the
// field is empty); nil for an unknown engine.
func (s *Scenario) Profile() *engine.Profile {
	if s.Engine == "" {
		return engine.Lookup(DefaultEngine)
	}
	return engine.Lookup(s.Engine)
}

// Speculative reports whether the scenario's flags switch its engine's
// speculative decoding on (e.g. SGLang's speculative-algorithm).
func (s *Scenario) Speculative() bool {
	p := s.Profile()
	return p != nil && p.IsSpeculative(s)
}

// ArgValue returns a flag's value (the last one of a repeated flag, "" for a
// bare flag) and whether the flag is set. The key may be written with or
// without its leading dashes.
func (s *Scenario) ArgValue(key string) (string, bool) {
	key = strings.TrimLeft(key, "-")
	for _, a := range s.Args {
		if a.Key != key {
			continue
		}
		if len(a.Values) == 0 {
			return "", true
		}
		return a.Values[len(a.Values)-1], true
	}
	return "", false
}

// ArgAt is where the scenario's files set an arg key, as file:line:col (the
// file that last set it, through extends); the scenario's own file when the
// key was not written in one (a scenario built in code: its name).
func (s *Scenario) ArgAt(key string) string {
	if s.src == nil {
		if s.File != "" {
			return s.File
		}
		return s.Name
	}
	if at, ok := s.src.argPos[key]; ok {
		return at.String()
	}
	return s.src.file.String()
}

// Fingerprint is the campaign's sweep fingerprint: Fingerprint(c.Sweep,
// c.PromptHash).
func (c *Campaign) Fingerprint() string { return Fingerprint(c.Sweep, c.PromptHash) }

// Sequential reports whether the campaign's rounds stop early when decided
// (`rounds: {min, max}`).
func (c *Campaign) Sequential() bool { return c.MinRounds > 0 && c.MinRounds < c.Rounds }

// SameSweep reports whether a recorded fingerprint (a run's manifest) is
// this campaign's sweep: its fingerprint, or the legacy one a run written
// before the request count left the fingerprint carries.
func (c *Campaign) SameSweep(recorded string) bool {
	return recorded == c.Fingerprint() || recorded == LegacyFingerprint(c.Sweep, c.PromptHash)
}

// AckFusionOnGPU is what engine.acknowledge writes to run SGLang's
// FlashInfer allreduce fusion on GPUs current SGLang refuses it on (a build
// patched to allow it): the preflight's error is then a warning
// (preflight.FusionOnGPUs).
const AckFusionOnGPU = "fusion-on-gpu"

// Acknowledgeable are the words engine.acknowledge takes.
var Acknowledgeable = []string{AckFusionOnGPU}
