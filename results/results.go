// Package results is the on-disk layout of a campaign run and the types
// stored in it. Writers (the orchestrator) and readers (report, diff) share
// it so that every table can be rebuilt from disk alone.
//
//	results/CAMPAIGN/RUN/
//	  manifest.json          Manifest
//	  journal.jsonl          one line per phase start/end (orchestrator)
//	  summary.json           Summary: every scenario's newest attempt
//	  SCENARIO/requests.jsonl measure.Record lines
//	  SCENARIO/levels.json   []measure.LevelSummary
//	  SCENARIO/server.log    the engine's log
//	  SCENARIO/metrics/      raw /metrics and /get_server_info scrapes
//	  SCENARIO/history/N/    earlier attempts, kept when a scenario is rerun
package results

import (
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
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
	HistoryDir   = "history"
)

// Manifest describes a run: what was asked and where it ran.
type Manifest struct {
	Campaign       string    `json:"campaign"`
	Run            string    `json:"run"` // UTC timestamp, also the directory name
	Started        time.Time `json:"started"`
	ConfigFile     string    `json:"config_file"`
	Fingerprint    string    `json:"fingerprint"`
	Baseline       string    `json:"baseline"`
	Scenarios      []string  `json:"scenarios"` // campaign order
	Sweep          SweepInfo `json:"sweep"`
	Host           HostFacts `json:"host"`
	BakeoffVersion string    `json:"bakeoff_version"`
	// Resolved is the campaign as resolved (extends applied), for the record.
	Resolved any `json:"resolved,omitempty"`
}

// SweepInfo is the part of the sweep the verdict's fairness checks need.
type SweepInfo struct {
	Concurrency []int   `json:"concurrency"`
	Requests    int     `json:"requests"` // 0 = auto
	MaxTokens   int     `json:"max_tokens"`
	Warmup      int     `json:"warmup"`
	Temperature float64 `json:"temperature"`
	IgnoreEOS   bool    `json:"ignore_eos"`
	Endpoint    string  `json:"endpoint"`
	Repeats     int     `json:"repeats"`
	PromptSet   string  `json:"prompt_set"` // hash of the prompt set's content
}

// HostFacts are read from the host once per run.
type HostFacts struct {
	Name   string   `json:"name"`
	OS     string   `json:"os,omitempty"`
	Arch   string   `json:"arch,omitempty"`
	Driver string   `json:"driver,omitempty"`
	GPUs   []string `json:"gpus,omitempty"` // one name per GPU
	Kernel string   `json:"kernel,omitempty"`
}

// Scenario outcome statuses.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusPending = "pending"
)

// ScenarioResult is the outcome of one attempt at one scenario.
type ScenarioResult struct {
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	Attempt     int       `json:"attempt"` // 1 for the first, higher after reruns
	Fingerprint string    `json:"fingerprint"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	// FailedPhase, Reason and LogExcerpt explain a failure.
	FailedPhase   string                 `json:"failed_phase,omitempty"`
	Reason        string                 `json:"reason,omitempty"`
	LogExcerpt    string                 `json:"log_excerpt,omitempty"`
	EngineVersion string                 `json:"engine_version,omitempty"`
	Launch        string                 `json:"launch,omitempty"` // the command line that started the server
	AcceptLength  *float64               `json:"accept_length,omitempty"`
	Levels        []measure.LevelSummary `json:"levels,omitempty"`
	// PhaseSeconds is where the time went, by phase name.
	PhaseSeconds map[string]float64 `json:"phase_seconds,omitempty"`
	// Dir is where this attempt's files are, relative to the run directory
	// and with forward slashes: the scenario's folder for its newest
	// attempt, SCENARIO/history/N for an earlier one. Empty in files written
	// before attempts were tracked, where it means the scenario's folder.
	Dir string `json:"dir,omitempty"`
	// History holds the scenario's earlier attempts, oldest first, each
	// without a history of its own. Only summary.json fills it; a failed
	// rerun must not hide an earlier attempt that completed.
	History []ScenarioResult `json:"history,omitempty"`
}

// Summary is every scenario's newest attempt, in campaign order.
type Summary struct {
	Campaign    string           `json:"campaign"`
	Run         string           `json:"run"`
	Fingerprint string           `json:"fingerprint"`
	Baseline    string           `json:"baseline"`
	Scenarios   []ScenarioResult `json:"scenarios"`
	Updated     time.Time        `json:"updated"`
}
