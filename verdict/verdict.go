// Package verdict turns a run's raw request records into an A/B decision per
// concurrency level: throughput with a confidence interval, the difference
// against the baseline and whether it is real, a tie or not yet known, and
// who wins. It holds the verdict's data (Verdict, Scenario, Level, Cell) and
// the rule that fills in its outcomes (DecideRun); the explanations (package
// verdict/explain) and the notes on the measurement (package verdict/notes)
// are added on top of a decided verdict, and package verdict/judge computes
// the whole.
//
// Computing never prints: warnings and notes are values in the returned
// Verdict, and package report renders them. The unit of the statistics is
// the launch: each launch (round) of a scenario contributes
// one steady-state throughput per level (package measure), a variant is
// compared with the baseline launched in the same round, and the
// launch-to-launch variance is pooled over the levels (rule.PooledVar). The
// tests are t-tests on log ratios, corrected over every comparison of the
// run (Holm), and each comparison ends as faster, slower, tie (two one-sided
// tests against the equivalence margin) or inconclusive. With one launch
// per scenario the within-launch samples stand in, and a winner must also
// clear the minimum effect. Under a sequential plan (Options.Sequential)
// the looks after each round are replayed and each comparison is decided at
// the first that closes it, with group-sequential boundaries
// (sequential.go). docs/METHOD.md says how every number is made.
package verdict

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/policy"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// Defaults for Options and for the checks.
const (
	// DefaultAlpha is the significance level below which a difference is
	// called real.
	DefaultAlpha = 0.05
	// DefaultConfidence is the level of the throughput confidence intervals.
	DefaultConfidence = 0.95
	// DefaultMaxSlices caps how many within-launch throughput samples
	// (equal sub-windows of the steady state, measure.LevelThroughput) one
	// level repeat gives.
	// They are used only when a scenario has a single launch.
	DefaultMaxSlices = 10
	// DefaultMinConcurrencyRatio is the fraction of the target concurrency
	// the achieved concurrency must reach before a fairness note is raised;
	// the load generator's own threshold.
	DefaultMinConcurrencyRatio = measure.MinAchievedShare
	// DefaultClientPaceShare is the share of a level's throughput the
	// client's dispatch lag may have taken (Level.PaceShare) above which the
	// load generator may have set the pace: the load generator's own
	// threshold, so that both flag the same levels.
	DefaultClientPaceShare = measure.ClientPaceShare
)

// Options tune DecideRun (and judge.Run, which passes them on). The zero value means the defaults.
type Options struct {
	// Alpha is the significance level (DefaultAlpha when zero).
	Alpha float64
	// Prior, when set, is a host's noise profile to lend the paired
	// comparisons (prior.go), instead of the one the run's manifest names.
	Prior *NoisePrior
	// Baseline overrides the run's baseline scenario when not empty.
	Baseline string
	// MaxSlices overrides DefaultMaxSlices when positive.
	MaxSlices int
	// Correction is rule.CorrectionHolm, rule.CorrectionBH or rule.CorrectionNone
	// (rule.DefaultCorrection when empty).
	Correction string
	// MinEffectPct and EquivalenceMarginPct override the run's (the
	// manifest's, else DefaultMinEffectPct and DefaultEquivalenceMarginPct)
	// when positive.
	MinEffectPct, EquivalenceMarginPct float64
	// Sequential, when set, judges the run as a sequential campaign
	// (sequential.go): the looks after each round from MinRounds to
	// MaxRounds are replayed, and each comparison is decided at the first
	// look that closes it. Nil keeps the fixed design: every comparison on
	// all the rounds.
	Sequential *SequentialPlan
	// Metric, when set, decides that metric (measure.Metrics' Name)
	// instead of throughput, for a MetricVerdict (metrics.go); empty for
	// throughput, with the run's verdict.metrics decided beside it.
	Metric string
	// measured is the throughput verdict a metric's is decided beside:
	// the levels' pooled figures are taken from it (measureScenario).
	measured *Verdict
	// truth, when set, replaces the launch-paired comparisons' variance
	// with the truth (truenoise.go): the validation's floor. Tests only.
	truth trueNoise
}

func (o Options) correction() string {
	switch o.Correction {
	case rule.CorrectionHolm, rule.CorrectionBH, rule.CorrectionNone:
		return o.Correction
	}
	return rule.DefaultCorrection
}

func (o Options) alpha() float64 {
	if o.Alpha > 0 && o.Alpha < 1 {
		return o.Alpha
	}
	return DefaultAlpha
}

// Slices is the most within-launch throughput samples one level repeat
// gives: MaxSlices, else DefaultMaxSlices.
func (o Options) Slices() int {
	if o.MaxSlices > 0 {
		return o.MaxSlices
	}
	return DefaultMaxSlices
}

// Verdict is the whole comparison of one run.
type Verdict struct {
	Campaign    string  `json:"campaign"`
	Run         string  `json:"run"`
	Dir         string  `json:"dir,omitempty"`
	Fingerprint string  `json:"fingerprint"`
	Baseline    string  `json:"baseline"`
	Alpha       float64 `json:"alpha"`
	Confidence  float64 `json:"confidence"`
	// Correction is the multiple-testing correction applied over all
	// Comparisons of the run, one family: every pair of scenarios at every
	// level, then CapacityComparisons of them that compare capacities.
	Correction  string `json:"correction"`
	Comparisons int    `json:"comparisons"`
	// Prior is the host's noise profile the run started with (prior.go),
	// lent to each paired comparison while tonight's noise agrees with it;
	// nil without one.
	Prior *NoisePrior `json:"noise_prior,omitempty"`
	// Noise is the launch-to-launch noise tonight's rounds measured on
	// their own, for the host's profile; nil with fewer than two rounds.
	Noise               *RunNoise `json:"noise,omitempty"`
	CapacityComparisons int       `json:"capacity_comparisons,omitempty"`
	// MinEffectPct is the smallest difference named a win when a comparison
	// has one launch per side; EquivalenceMarginPct the ± margin of a tie.
	MinEffectPct         float64 `json:"min_effect_pct"`
	EquivalenceMarginPct float64 `json:"equivalence_margin_pct"`
	// Rounds is the most completed launches (ok or failed, not cut) any
	// scenario has; RoundsPlanned the rounds the campaign asked for (1 in
	// runs written before rounds). Rounds split into parts over a fleet
	// count as the replicates they are parts of (replicates.go).
	Rounds        int `json:"rounds"`
	RoundsPlanned int `json:"rounds_planned"`
	// RoundsCompleted is how many rounds every scenario has completed (a
	// scenario that failed in all of them aside): fewer than RoundsPlanned
	// in a run cut short.
	RoundsCompleted int `json:"rounds_completed"`
	// Parts is, when the rounds were split over a fleet, how many results
	// rounds they were laid out as (each with its own baseline launch); 0
	// when each round ran whole.
	Parts       int     `json:"parts,omitempty"`
	MaxTokens   int     `json:"max_tokens,omitempty"`
	IgnoreEOS   bool    `json:"ignore_eos,omitempty"`
	Temperature float64 `json:"temperature"`
	// Percentiles are those every latency is given at (the manifest's
	// sweep.percentiles, else measure.DefaultPercentiles), ascending.
	Percentiles []float64 `json:"percentiles"`
	// Engines are the engine builds the run's preflight asked, one line
	// each (EngineLines); empty for runs written before it.
	Engines []string `json:"engines,omitempty"`
	// Scenarios are in campaign order; failed ones are listed with no levels.
	Scenarios []Scenario `json:"scenarios"`
	// Levels are every measured concurrency level, ascending.
	Levels []measure.Level `json:"levels"`
	// Rows hold one comparison per level, in Levels order.
	Rows []Row `json:"rows"`
	// Crossovers hold one sentence per variant, in campaign order.
	Crossovers []Crossover `json:"crossovers"`
	// Notes are the fairness findings, most severe first.
	Notes []Note `json:"notes"`
	// Capacity is the goodput and capacity under the campaign's
	// service-level objective (capacity.go); nil when it has none.
	Capacity *CapacityVerdict `json:"capacity,omitempty"`
	// Hosts is each host's speed when the run's launches ran on more than
	// one host (a fleet); nil otherwise.
	Hosts []HostSpeed `json:"hosts,omitempty"`
	// MixedHosts lists the pairs of scenarios that have rounds whose two
	// launches ran on different hosts: those rounds are left out of the
	// pair's comparison.
	MixedHosts []MixedHostRounds `json:"mixed_hosts,omitempty"`
	// Sequential is what a sequential plan did to each variant (rounds,
	// whether it stopped and why); nil under a fixed design.
	Sequential *SequentialVerdict `json:"sequential,omitempty"`
	// Cost is what the campaign spent on its answer: the comparisons
	// decided, the launches and their time (Cost); nil when computed
	// from records alone.
	Cost *CampaignCost `json:"cost,omitempty"`
	// PerGPU is true when the scenarios hold different numbers of GPUs
	// (Scenario.GPUs, every one known): every comparison between scenarios
	// and every row's winner are then of throughput per GPU (pergpu.go).
	PerGPU bool `json:"per_gpu,omitempty"`
	// Metrics are the campaign's verdict.metrics, each decided per level as
	// throughput is (metrics.go); empty for throughput alone.
	Metrics []*MetricVerdict `json:"metrics,omitempty"`
	// Selection is the race of a campaign that asks for the best
	// configuration per level (question: select; package judge replays
	// it): nil for a comparison with the baseline, or when the race could
	// not be replayed (a note says why).
	Selection *selection.Result `json:"selection,omitempty"`
	// Policy is the finished race's serving policy written as one engine
	// setting, or why it cannot be (package policy); nil while the race
	// runs, for a policy of one configuration, and in a race that checks a
	// policy. PolicyCheck is that check: how the configuration named
	// "policy" stood against the fixed ones at each level; nil when the
	// race has none.
	Policy      *policy.Written `json:"policy,omitempty"`
	PolicyCheck *policy.Checked `json:"policy_check,omitempty"`
	// Pareto is every scenario's levels on the plane of throughput per GPU
	// against output tokens per second per user, with the frontiers
	// (pareto.go); nil when no level has both.
	Pareto *Pareto `json:"pareto,omitempty"`

	replicates replicateOf // each results round's replicate; nil when not split
	priorUses  []*PriorUse // how the prior served each pair, on all rounds
	truth      trueNoise   // Options.truth
	// doubted are the comparisons left out of the family because a side's
	// measurement is doubted (doubt.go), for the table.
	doubted map[pairKey]*Comparison
}

// Scenario is one server variant's measurements.
type Scenario struct {
	Name        string `json:"name"`
	Status      string `json:"status"`
	Attempt     int    `json:"attempt,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// FailedPhase and Reason explain a failed scenario.
	FailedPhase string `json:"failed_phase,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// AcceptLength is the speculative accept length over the whole
	// scenario, when the engine reported one.
	AcceptLength *float64 `json:"accept_length,omitempty"`
	Levels       []Level  `json:"levels,omitempty"`
	// Launches are the scenario's launches, one per round, in round order.
	Launches []LaunchInfo `json:"launches,omitempty"`
	// GPUs is the GPUs one launch holds, from the manifest
	// (campaign.Scenario.GPUs); 0 when the run does not say (written before
	// it was recorded, or on hosts without a GPU).
	GPUs int `json:"gpus,omitempty"`
	// Attempt, Dir and Newest describe the first launch (the only one in a
	// run of one round): Dir is the folder, relative to the run directory,
	// of the attempt the figures come from, the newest complete one; Newest
	// is the newest attempt when it is not that one (a rerun that failed or
	// was interrupted after an earlier attempt completed).
	Dir    string   `json:"dir,omitempty"`
	Newest *Attempt `json:"newest_attempt,omitempty"`
}

// LaunchInfo is one launch (round) of a scenario: where its figures come
// from and how it ended.
type LaunchInfo struct {
	Round int `json:"round"`
	Order int `json:"order"`
	// Host is the host the launch ran on; empty when the results do not say.
	Host        string   `json:"host,omitempty"`
	Attempt     int      `json:"attempt,omitempty"`
	Status      string   `json:"status"`
	FailedPhase string   `json:"failed_phase,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	Dir         string   `json:"dir,omitempty"`
	Newest      *Attempt `json:"newest_attempt,omitempty"`
}

// Failed reports whether the launch has no usable measurements.
func (l LaunchInfo) Failed() bool { return l.Status == "failed" }

// Cut reports whether the launch was interrupted before it finished (or
// never ran): its records, if any, are not counted.
func (l LaunchInfo) Cut() bool { return l.Status == results.StatusPending }

// Completed counts the scenario's launches that ran to their end, failed
// or not: the rounds it has done.
func (s Scenario) Completed() int {
	n := 0
	for _, l := range s.Launches {
		if !l.Cut() {
			n++
		}
	}
	return n
}

// Attempt is what the verdict says of an attempt it takes no figures from.
type Attempt struct {
	Attempt     int    `json:"attempt"`
	Status      string `json:"status"`
	FailedPhase string `json:"failed_phase,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// Superseded says, one sentence per launch, that a launch's newest attempt
// did not complete and which attempt its figures come from; empty when
// every launch's figures are its newest attempt's.
func (s *Scenario) Superseded() []string {
	var out []string
	for _, l := range s.Launches {
		if l.Newest == nil {
			continue
		}
		what := "was interrupted"
		if l.Newest.Status == "failed" {
			what = "failed"
			if l.Newest.FailedPhase != "" {
				what += " in phase " + l.Newest.FailedPhase
			}
		}
		if l.Newest.Reason != "" {
			what += " (" + FirstLine(l.Newest.Reason) + ")"
		}
		name := s.Name
		if len(s.Launches) > 1 {
			name = fmt.Sprintf("%s round %d", s.Name, l.Round)
		}
		out = append(out, fmt.Sprintf("%s: the newest attempt (%d) %s; the figures are from attempt %d, the newest that completed (%s)",
			name, l.Newest.Attempt, what, l.Attempt, l.Dir))
	}
	return out
}

// FailedLaunches are the scenario's failed launches when others succeeded.
func (s *Scenario) FailedLaunches() []LaunchInfo {
	if s.Failed() {
		return nil
	}
	var out []LaunchInfo
	for _, l := range s.Launches {
		if l.Failed() {
			out = append(out, l)
		}
	}
	return out
}

// Failed reports whether the scenario has no usable measurements.
func (s *Scenario) Failed() bool { return s.Status == "failed" }

// Level returns the scenario's measurements at concurrency c, or nil.
func (s *Scenario) Level(c measure.Level) *Level {
	if s == nil {
		return nil
	}
	for i := range s.Levels {
		if s.Levels[i].Level == c {
			return &s.Levels[i]
		}
	}
	return nil
}

// Level is one scenario at one concurrency, over all its repeats.
type Level struct {
	Level   measure.Level `json:"level"`
	Repeats int           `json:"repeats"`
	// Figures are the level's counts, per-request distributions and
	// throughput over every launch and repeat, pooled: the same figures,
	// made the same way, as each live sweep line.
	measure.Figures
	// Launches are the level's figures per launch, in round order: what the
	// comparisons use.
	Launches []LaunchLevel `json:"launches"`
	// Samples are the within-launch throughput samples in tok/s (equal
	// sub-windows, measure.LevelThroughput) of every launch and repeat, in
	// launch then time order; the comparisons use them only for a scenario
	// launched once.
	Samples []float64 `json:"samples"`
	// Throughput is the geometric mean of the launches' throughputs with its
	// confidence interval (from the launch-to-launch variation, or with one
	// launch from its within-launch samples), tok/s.
	Throughput Estimate `json:"throughput"`
	// ThroughputPerGPU is Throughput over the scenario's GPUs, tok/s per
	// GPU; nil when its GPU count is unknown.
	ThroughputPerGPU *Estimate `json:"throughput_per_gpu,omitempty"`
	// SliceSeconds is the mean length of the interval one within-launch
	// sample covers.
	SliceSeconds float64 `json:"slice_s"`
	// ClientLimited flags a level where the load generator, not the
	// server, may have set the pace.
	ClientLimited bool `json:"client_limited,omitempty"`
	// Doubts are the reasons bakeoff questions this measurement (pacing,
	// counts that disagree, a cache not cleared): its comparisons are not
	// decided (OutcomeDoubted).
	Doubts []Doubt `json:"doubts,omitempty"`
	// launchFacts are what each launch's summary says toward the doubts,
	// for a look that sees only some of the launches (doubtsUpTo).
	launchFacts []launchFacts
	// AcceptLength is the level's speculative accept length, when reported:
	// Accept's center.
	AcceptLength *float64 `json:"accept_length,omitempty"`
	// Accept is the level's speculative acceptance over the launches, with
	// its interval and source; nil when none was reported.
	Accept *LevelAccept `json:"accept,omitempty"`
	// Server is what the server's own metrics said over the level's steady
	// windows (running batch, queue, KV use, preemptions, prefix hits,
	// acceptance, generation throughput), each figure the mean over launches
	// with its source; nil when no launch had a timeline.
	Server *measure.ServerSummary `json:"server,omitempty"`
	// Timeline is the server's running batch, queue and KV use through the
	// level in one launch, with the steady windows; nil when no launch has
	// a timeline (older runs, engines without /metrics).
	Timeline *LevelTimeline `json:"timeline,omitempty"`
	// Categories are the level's figures per prompt category, when the
	// prompt set has categories.
	Categories []measure.CategorySummary `json:"categories,omitempty"`
	// Sessions are the level's figures per session and per turn index,
	// over every launch, for a sweep of multi-turn sessions.
	Sessions *measure.SessionSummary `json:"sessions,omitempty"`
	// InputLengths says how the level's prompts asked for in tokens were
	// made that long (measure.LengthsExact, measure.LengthsEstimated: the
	// launches' level summaries, estimated when any launch's was); empty
	// when the prompts ask for no lengths.
	InputLengths string `json:"input_lengths,omitempty"`
	// Saturated is true for an open-loop level at which some launch's
	// server could not keep up with the arrivals (measure.SaturationOf);
	// Saturation says which launch and what was seen. Such a level's
	// figures grow with its length, so it is shown as saturated and never
	// compared.
	Saturated  bool   `json:"saturated,omitempty"`
	Saturation string `json:"saturation,omitempty"`
	// SLO is the level against the campaign's service-level objective;
	// nil when it has none.
	SLO *LevelSLO `json:"slo,omitempty"`
	// Energy is the level's GPU power and energy per 1000 tokens, when
	// power was read.
	Energy *LevelEnergy `json:"energy,omitempty"`
	// Warnings are about the samples themselves (too few, no steady state).
	Warnings []string `json:"warnings,omitempty"`
}

// LaunchLevel is one launch's figures at one level, its repeats pooled.
type LaunchLevel struct {
	Round int `json:"round"`
	Order int `json:"order"`
	// Host is the host the launch ran on; empty when the results do not say.
	Host string `json:"host,omitempty"`
	// Throughput is the steady-state throughput, tok/s: tokens produced in
	// the steady-state windows of the launch's repeats over their length.
	Throughput float64 `json:"throughput"`
	// Samples are the launch's within-launch samples, tok/s.
	Samples []float64 `json:"samples,omitempty"`
	// paceLag and paceSlot are the launch's measure.PaceSums over its
	// repeats: a look pools them over the rounds it saw (doubtsUpTo).
	paceLag, paceSlot float64
}

// Estimate is a center with its confidence interval.
type Estimate struct {
	Center     float64 `json:"center"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	N          int     `json:"n"`
}

// HalfWidthPct is half the confidence interval's width as a percentage of
// the center, the "± x%" that benchstat prints.
func (e Estimate) HalfWidthPct() float64 {
	if e.Center == 0 {
		return 0
	}
	return 100 * (e.Hi - e.Lo) / 2 / e.Center
}

// Row outcomes: who leads a level.
const (
	RowWinner       = "winner"       // one scenario beats every other
	RowTie          = "tie"          // the leader ties with every other
	RowInconclusive = "inconclusive" // the leader cannot be told from some other
)

// Row is the comparison at one concurrency level.
type Row struct {
	Level measure.Level `json:"level"`
	// Cells hold one entry per scenario, in Verdict.Scenarios order.
	Cells []Cell `json:"cells"`
	// Outcome is RowWinner, RowTie, RowInconclusive, or empty when fewer
	// than two scenarios were measured at this level.
	Outcome string `json:"outcome,omitempty"`
	// Winner is the scenario whose throughput is the highest and that is
	// faster (corrected) than every other; Tied names the scenarios tied
	// with the leader when all are; Unresolved names the leader and the
	// scenarios it cannot be told from.
	Winner     string   `json:"winner,omitempty"`
	Tied       []string `json:"tied,omitempty"`
	Unresolved []string `json:"unresolved,omitempty"`
	// Doubted names the scenarios left out of the row's decision because
	// their measurement at this level is doubted (Level.Doubts).
	Doubted []string `json:"doubted,omitempty"`
}

// Cell is one scenario at one level, compared with the baseline.
type Cell struct {
	Scenario string `json:"scenario"`
	// Present is false when the scenario has no measurement at this level.
	Present    bool     `json:"present"`
	Throughput Estimate `json:"throughput"`
	// ThroughputPerGPU is the level's throughput per GPU (Level's); nil
	// when the scenario's GPU count is unknown.
	ThroughputPerGPU *Estimate `json:"throughput_per_gpu,omitempty"`
	// PerGPU says the cell's comparison, and its row's winner, are of
	// throughput per GPU (Verdict.PerGPU).
	PerGPU bool `json:"per_gpu,omitempty"`
	// Compared is true for a variant with a baseline measurement to compare;
	// the comparison's fields are then filled, the variant against the
	// baseline.
	Compared bool `json:"compared"`
	// Saturated is true when the scenario saturated at this open-loop
	// level (Level.Saturated): not Present, not compared.
	Saturated bool `json:"saturated,omitempty"`
	Comparison
	// PairedOnly is set when the comparison's paired rounds (Rounds) are
	// fewer than the launches behind either throughput shown (a look closed
	// it before the last round, a launch failed on one side, a round ran on
	// two hosts, or the baseline ran once per part of a split round): the
	// change is the paired estimate over those rounds, which need not equal
	// the ratio of the two figures, and the cell says so.
	PairedOnly bool     `json:"paired_only,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}
