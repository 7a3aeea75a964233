// Package results is the on-disk layout of a campaign run and the types
// stored in it. Writers (the orchestrator) and readers (report, diff) share
// it so that every table can be rebuilt from disk alone.
//
//	results/CAMPAIGN/RUN/
//	  manifest.json                   Manifest (Order: the launch order of each round)
//	  journal.jsonl                   one line per phase start/end (orchestrator)
//	  summary.json                    Summary: every launch's newest attempt
//	  SCENARIO/round-K/requests.jsonl measure.Record lines of round K's launch
//	  SCENARIO/round-K/levels.json    []measure.LevelSummary
//	  SCENARIO/round-K/result.json    that attempt's ScenarioResult
//	  SCENARIO/round-K/server.log     the engine's log
//	  SCENARIO/round-K/metrics/       raw /metrics and /get_server_info scrapes
//	  SCENARIO/round-K/history/N/     earlier attempts, kept when a launch is rerun
//
// A run written before rounds has the files of its one launch in SCENARIO/
// itself (and SCENARIO/history/N/); it reads as round 1.
package results

import (
	"github.com/bakeoff-dev/bakeoff/hoststate"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/slo"
)

// File names inside a run directory.
const (
	ManifestFile = "manifest.json"
	JournalFile  = "journal.jsonl"
	SummaryFile  = "summary.json"
	ResultFile   = "result.json"
	RequestsFile = "requests.jsonl"
	LevelsFile   = "levels.json"
	ServerLog    = "server.log"
	MetricsDir   = "metrics"
	// PowerFile is the launch's GPU power readings (measure.PowerLog);
	// PowerLogFile the sampler's output as it wrote it.
	PowerFile    = "power.json"
	PowerLogFile = "power.log"
	HistoryDir   = "history"
)

// RoundDirPrefix names a round's folder inside a scenario's: round-1, …
const RoundDirPrefix = "round-"

// Manifest describes a run: what was asked and where it ran.
type Manifest struct {
	Campaign    string    `json:"campaign"`
	Run         string    `json:"run"` // UTC timestamp, also the directory name
	Started     time.Time `json:"started"`
	ConfigFile  string    `json:"config_file"`
	Fingerprint string    `json:"fingerprint"`
	Baseline    string    `json:"baseline"`
	Scenarios   []string  `json:"scenarios"` // campaign order
	Sweep       SweepInfo `json:"sweep"`
	Host        HostFacts `json:"host"`
	// Hosts names a fleet's hosts (hosts:), as their Name() gives them,
	// those of the run's earlier invocations first; empty for a single host.
	Hosts []string `json:"hosts,omitempty"`
	// Fleet is, for a fleet, what the campaign found of each host of Hosts
	// when it started: the host's facts (GPUs, driver, kernel), or why it
	// was left out (it could not be reached, locked or prepared), so that a
	// run read the next morning says which machines measured it and which
	// sat out. Each invocation of the run updates the hosts it tried; empty
	// for a single host, whose facts are Host.
	Fleet          []FleetHost `json:"fleet,omitempty"`
	BakeoffVersion string      `json:"bakeoff_version"`
	// Engines are the engine builds the preflight asked on each host before
	// the first launch, in host and campaign order; empty in runs written
	// before the preflight, and in a dry run.
	Engines []EngineBuild `json:"engines,omitempty"`
	// Resolved is the campaign as resolved (extends applied), for the record.
	Resolved any `json:"resolved,omitempty"`

	// Rounds is how many times each scenario is launched; 0 in runs written
	// before rounds, which means 1.
	Rounds int `json:"rounds,omitempty"`
	// MinRounds is rounds.min of a sequential campaign (`rounds: {min,
	// max}`, Rounds the max): from it on, a variant whose comparisons are
	// all decided is launched no more. 0: the fixed design.
	MinRounds int `json:"min_rounds,omitempty"`
	// Budget is the time the campaign was given, as the user wrote it
	// ("8h", or "until 07:00"); empty without one.
	Budget string `json:"budget,omitempty"`
	// MinEffectPct is the campaign's min_effect, in percent.
	MinEffectPct float64 `json:"min_effect_pct,omitempty"`
	// EquivalenceMarginPct is the campaign's equivalence_margin, in percent.
	EquivalenceMarginPct float64 `json:"equivalence_margin_pct,omitempty"`
	// VerdictMetrics are the metrics the verdict decides beside throughput
	// (the campaign's verdict.metrics), each with its tie margin; empty for
	// throughput alone.
	VerdictMetrics []VerdictMetric `json:"verdict_metrics,omitempty"`
	// Select is the campaign's question when it asks for the best
	// configuration per level (question: select) instead of each variant
	// against the baseline: the race's indifference zone and probability
	// of correct selection. nil for a comparison with the baseline.
	Select *SelectInfo `json:"select,omitempty"`
	// Order is the scenario names of each round, in launch order; empty in
	// runs written before rounds, where the campaign order was the only one.
	Order [][]string `json:"order,omitempty"`
	// Replicates, in a run whose rounds were split over a fleet, gives the
	// replicate (1-based) of each round of Order: a replicate launches
	// every scenario once, split into parts that each ran on one host with
	// the baseline. Empty when every round is its own replicate.
	Replicates []int `json:"replicates,omitempty"`
	// SLO is the campaign's service-level objective (key slo); nil when it
	// has none.
	SLO *slo.SLO `json:"slo,omitempty"`
	// Allocation is the cluster allocation the run's hosts belong to (a
	// Slurm job), so that --resume can reattach to it while it lives; nil
	// for SSH and local hosts.
	Allocation *Allocation `json:"allocation,omitempty"`
	// ScenarioGPUs is the GPUs one launch of each scenario holds
	// (campaign.Scenario.GPUs), by name: what the verdict divides each
	// throughput by to compare scenarios of different sizes per GPU. Absent
	// in runs written before it and on hosts without a GPU (gpu: none),
	// where the counts are unknown.
	ScenarioGPUs map[string]int `json:"scenario_gpus,omitempty"`
	// NoisePrior is the host's noise profile the run started with (package
	// noise): the pooled variance of one round's paired log difference
	// that earlier runs on the same host, engine and model measured, which
	// the verdict lends to its looks while tonight's noise agrees with it.
	// Nil without one (a first run there, a fleet, or --no-prior).
	NoisePrior *NoisePrior `json:"noise_prior,omitempty"`
}

// NoisePrior is a host's pooled launch noise as a run recorded it.
type NoisePrior struct {
	Var    float64  `json:"round_var"`
	DF     float64  `json:"df"`
	Source string   `json:"source"`
	Runs   []string `json:"runs,omitempty"`
}

// Allocation is a batch system's allocation a run's hosts came from.
type Allocation struct {
	System string    `json:"system"` // "slurm"
	JobID  string    `json:"job_id"`
	Login  string    `json:"login"`         // the login host as configured
	Nodes  []string  `json:"nodes"`         // node names, in order
	End    time.Time `json:"end,omitempty"` // when the allocation's time limit ends
}

// SweepInfo is the part of the sweep the verdict's fairness checks need.
type SweepInfo struct {
	Concurrency []int `json:"concurrency"`
	// Rates and Burstiness are an open-loop sweep's arrival rates
	// (requests per second) and their shape, instead of Concurrency.
	Rates       []float64 `json:"rates,omitempty"`
	Burstiness  float64   `json:"burstiness,omitempty"`
	Requests    int       `json:"requests"` // 0 = auto
	MaxTokens   int       `json:"max_tokens"`
	Warmup      int       `json:"warmup"`
	Temperature float64   `json:"temperature"`
	IgnoreEOS   bool      `json:"ignore_eos"`
	Endpoint    string    `json:"endpoint"`
	Repeats     int       `json:"repeats"`
	PromptSet   string    `json:"prompt_set"` // hash of the prompt set's content
	// Speeds are a trace replay's levels (multiples of the trace's pace),
	// instead of Concurrency; BlockSize the tokens per hash id. The trace's
	// content hash is in the fingerprint.
	Speeds    []float64 `json:"speeds,omitempty"`
	BlockSize int       `json:"block_size,omitempty"`
	// InputLengths says, per engine of the campaign, how prompts asked for
	// in tokens (a synthetic set, a trace) are made that long: through the
	// engine's tokenize call, as token ids, or estimated at 4/3 tokens per
	// word where the engine has neither (loadgen.PlannedLengths).
	InputLengths map[string]string `json:"input_lengths,omitempty"`
	// Percentiles are the percentiles the reports give every latency at;
	// absent (runs written before the key, or a campaign without it):
	// measure.DefaultPercentiles.
	Percentiles []float64 `json:"percentiles,omitempty"`
}

// FleetHost is one host of a fleet in the manifest.
type FleetHost struct {
	Host string `json:"host"` // its name, as in Manifest.Hosts
	// Facts are as the newest invocation that prepared the host read them;
	// nil if none could.
	Facts *HostFacts `json:"facts,omitempty"`
	// LeftOut says why the newest invocation that tried the host ran
	// nothing on it; "" when it was used.
	LeftOut string `json:"left_out,omitempty"`
}

// HostFacts are read from the host once per run.
type HostFacts struct {
	Name   string   `json:"name"`
	OS     string   `json:"os,omitempty"`
	Arch   string   `json:"arch,omitempty"`
	Driver string   `json:"driver,omitempty"`
	GPUs   []string `json:"gpus,omitempty"` // one name per GPU
	Kernel string   `json:"kernel,omitempty"`
	// Governor is the CPU frequency governor (hoststate.GovernorFile);
	// empty where the host has none, as many VMs do not.
	Governor string `json:"governor,omitempty"`
	// NoGPU is set when the campaign says the host has no GPU (gpu:
	// none): Driver and GPUs were not read, rather than read and found
	// empty.
	NoGPU bool `json:"no_gpu,omitempty"`
	// RDMA is what the host offers a disaggregated deployment's KV cache
	// transfer, read once per run when a scenario's roles set
	// disaggregation-mode; nil when it was not read.
	RDMA *RDMA `json:"rdma,omitempty"`
}

// RDMA is a host's RDMA devices as a run found them, and what the
// transfer engines of its disaggregated scenarios said of them. Without one,
// SGLang's default KV transfer (Mooncake) moves the KV cache over TCP and
// says nothing but how many devices it found (docs/ENGINES.md, SGLang
// deployments): a slower transfer, in every first token.
type RDMA struct {
	// Devices are the entries of /sys/class/infiniband (mlx5_0, …), where
	// the kernel registers every RDMA device (InfiniBand, RoCE, iWARP);
	// empty when the directory is empty or absent.
	Devices []string `json:"devices"`
	// Unread says why Devices could not be read; empty when they were.
	Unread string `json:"unread,omitempty"`
	// Scenarios are the campaign's scenarios whose KV transfer wants them:
	// their roles set disaggregation-mode, with Mooncake or NIXL moving
	// the KV cache, on an engine of their own (the sim moves none).
	Scenarios []string `json:"scenarios,omitempty"`
	// NoHCA names the roles (SCENARIO.ROLE) whose log carried the transfer
	// engine's own word that it found no RDMA device (Mooncake's
	// "Topology discovery complete. Found 0 HCAs."), however many Devices
	// lists: a container may see the devices and not be given them.
	NoHCA []string `json:"no_hca,omitempty"`
}

// Scenario outcome statuses.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusPending = "pending"
)

// ScenarioResult is the outcome of one attempt at one launch: one scenario
// in one round. Attempt counts the attempts at that launch.
type ScenarioResult struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Attempt int    `json:"attempt"` // 1 for the first, higher after reruns
	// HostName is the Name() of the host the attempt ran on (an ssh alias or
	// user@host:port, or "local"); within a round every counted attempt
	// shares one host. Empty in files written before it was recorded.
	HostName    string    `json:"host_name,omitempty"`
	Fingerprint string    `json:"fingerprint"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	// FailedPhase, Reason and LogExcerpt explain a failure.
	FailedPhase   string   `json:"failed_phase,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	LogExcerpt    string   `json:"log_excerpt,omitempty"`
	EngineVersion string   `json:"engine_version,omitempty"`
	Launch        string   `json:"launch,omitempty"` // the command line that started the server
	AcceptLength  *float64 `json:"accept_length,omitempty"`
	// FiguresFrom names the deployment role the engine's own figures (its
	// info call, /metrics and the server timeline) were read from when it
	// is not the role the load went to: a worker behind SGLang's router,
	// which serves neither. Empty for a single server.
	FiguresFrom string                 `json:"figures_from,omitempty"`
	Levels      []measure.LevelSummary `json:"levels,omitempty"`
	// PhaseSeconds is where the time went, by phase name.
	PhaseSeconds map[string]float64 `json:"phase_seconds,omitempty"`
	// HostState is the host's load around the sweep (read just before it
	// and just after it); nil where it could not be read, and in files
	// written before it was recorded.
	HostState *hoststate.Launch `json:"host_state,omitempty"`
	// Dir is where this attempt's files are, relative to the run directory
	// and with forward slashes: the launch's folder (SCENARIO/round-K) for
	// its newest attempt, SCENARIO/round-K/history/N for an earlier one.
	// Empty in files written before attempts were tracked, where it means
	// the scenario's folder.
	Dir string `json:"dir,omitempty"`
	// History holds the launch's earlier attempts, oldest first, each
	// without a history of its own. Only summary.json fills it; a failed
	// rerun must not hide an earlier attempt that completed.
	History []ScenarioResult `json:"history,omitempty"`

	// Round is the round this launch belongs to, 1-based; 0 in files
	// written before rounds, which means 1.
	Round int `json:"round,omitempty"`
}

// Summary is every launch's newest attempt, in campaign order of the
// scenarios and, within a scenario, in round order.
type Summary struct {
	Campaign    string           `json:"campaign"`
	Run         string           `json:"run"`
	Fingerprint string           `json:"fingerprint"`
	Baseline    string           `json:"baseline"`
	Scenarios   []ScenarioResult `json:"scenarios"`
	Updated     time.Time        `json:"updated"`
}

// SelectInfo is a selection campaign's question (Manifest.Select).
type SelectInfo struct {
	// DeltaPct is the indifference zone, percent: configurations within it
	// of the best are as good as the best.
	DeltaPct float64 `json:"delta_pct"`
	// PCS is the probability of correct selection asked of each level.
	PCS float64 `json:"pcs"`
	// FirstStage is the rounds before any configuration is ruled out; 0
	// for the race's default.
	FirstStage int `json:"first_stage,omitempty"`
}

// VerdictMetric is one metric a run's verdict decides beside throughput
// (measure.Metrics' Name), with the ± margin, percent, of a tie in it; 0
// for the run's EquivalenceMarginPct.
type VerdictMetric struct {
	Name      string  `json:"name"`
	MarginPct float64 `json:"margin_pct,omitempty"`
}
