// Package verdict turns a run's raw request records into an A/B decision per
// concurrency level: throughput with a confidence interval, the delta against
// the baseline, whether that delta is significant, who wins, where each
// variant's advantage crosses over, and the fairness checks that say whether
// the comparison can be trusted at all.
//
// Computing never prints: warnings and fairness findings are values in the
// returned Verdict, and package report renders them. The statistics are
// benchstat's (golang.org/x/perf/benchmath) applied to batch means: each
// level's steady state is cut into time slices at least one request latency
// long, and the slices' throughputs are compared with Welch's t-test.
// docs/METHOD.md says how every number is made.
package verdict

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// Defaults for Options and for the checks.
const (
	// DefaultAlpha is the significance level below which a difference is
	// called real.
	DefaultAlpha = 0.05
	// DefaultConfidence is the level of the throughput confidence intervals.
	DefaultConfidence = 0.95
	// DefaultMaxSlices caps how many equal time slices (batches) the
	// steady-state window of one level repeat is cut into; each slice is one
	// throughput sample. Slices are never shorter than the level's median
	// request latency, so fewer are cut when the window is short.
	DefaultMaxSlices = 10
	// DefaultMinConcurrencyRatio is the fraction of the target concurrency
	// the achieved concurrency must reach before a fairness note is raised;
	// the load generator's own threshold.
	DefaultMinConcurrencyRatio = measure.MinAchievedShare
	// DefaultClientLagFraction is the dispatch lag (p99), as a fraction of
	// the level's median latency, above which the load generator may have
	// set the pace (and only above DefaultClientLagFloor, seconds): the load
	// generator's own thresholds, so that both flag the same levels.
	DefaultClientLagFraction = measure.ClientLagShare
	DefaultClientLagFloor    = measure.ClientLagFloor
)

// Options tune Compute. The zero value means the defaults.
type Options struct {
	// Alpha is the significance level (DefaultAlpha when zero).
	Alpha float64
	// Baseline overrides the run's baseline scenario when not empty.
	Baseline string
	// MaxSlices overrides DefaultMaxSlices when positive.
	MaxSlices int
}

func (o Options) alpha() float64 {
	if o.Alpha > 0 && o.Alpha < 1 {
		return o.Alpha
	}
	return DefaultAlpha
}

func (o Options) maxSlices() int {
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
	MaxTokens   int     `json:"max_tokens,omitempty"`
	IgnoreEOS   bool    `json:"ignore_eos,omitempty"`
	Temperature float64 `json:"temperature"`
	// Scenarios are in campaign order; failed ones are listed with no levels.
	Scenarios []Scenario `json:"scenarios"`
	// Levels are every measured concurrency level, ascending.
	Levels []int `json:"levels"`
	// Rows hold one comparison per level, in Levels order.
	Rows []Row `json:"rows"`
	// Crossovers hold one sentence per variant, in campaign order.
	Crossovers []Crossover `json:"crossovers"`
	// Notes are the fairness findings, most severe first.
	Notes []Note `json:"notes"`
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
	// Dir is the folder, relative to the run directory, of the attempt the
	// figures come from: the newest complete one.
	Dir string `json:"dir,omitempty"`
	// Newest is the scenario's newest attempt when it is not the one the
	// figures come from: a rerun that failed or was interrupted after an
	// earlier attempt completed.
	Newest *Attempt `json:"newest_attempt,omitempty"`
}

// Attempt is what the verdict says of an attempt it takes no figures from.
type Attempt struct {
	Attempt     int    `json:"attempt"`
	Status      string `json:"status"`
	FailedPhase string `json:"failed_phase,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// Superseded says, in one sentence, that the scenario's newest attempt did
// not complete and which attempt its figures come from; "" when the figures
// are the newest attempt's.
func (s *Scenario) Superseded() string {
	if s.Newest == nil {
		return ""
	}
	what := "was interrupted"
	if s.Newest.Status == "failed" {
		what = "failed"
		if s.Newest.FailedPhase != "" {
			what += " in phase " + s.Newest.FailedPhase
		}
	}
	if s.Newest.Reason != "" {
		what += " (" + FirstLine(s.Newest.Reason) + ")"
	}
	return fmt.Sprintf("%s: the newest attempt (%d) %s; the figures are from attempt %d, the newest that completed (%s)",
		s.Name, s.Newest.Attempt, what, s.Attempt, s.Dir)
}

// Failed reports whether the scenario has no usable measurements.
func (s *Scenario) Failed() bool { return s.Status == "failed" }

// Level returns the scenario's measurements at concurrency c, or nil.
func (s *Scenario) Level(c int) *Level {
	for i := range s.Levels {
		if s.Levels[i].Level == c {
			return &s.Levels[i]
		}
	}
	return nil
}

// Level is one scenario at one concurrency, over all its repeats.
type Level struct {
	Level   int `json:"level"`
	Repeats int `json:"repeats"`
	// Requests counts measured (non-warm-up) requests; OK and Failed split
	// them; FailedByClass counts failures by error class.
	Requests      int            `json:"requests"`
	OK            int            `json:"ok"`
	Failed        int            `json:"failed"`
	FailedByClass map[string]int `json:"failed_by_class,omitempty"`
	Tokens        int            `json:"tokens"` // completion tokens of successful requests
	// Samples are the throughput samples in tok/s (one per time slice of the
	// steady-state window, for every repeat), in time order.
	Samples []float64 `json:"samples"`
	// Throughput is the mean of Samples with its confidence interval, tok/s.
	Throughput Estimate `json:"throughput"`
	// SteadyThroughput is tokens over the whole steady-state window, tok/s;
	// WallThroughput is tokens over first send to last end, tok/s.
	SteadyThroughput float64 `json:"steady_throughput"`
	WallThroughput   float64 `json:"wall_throughput"`
	// SteadySeconds is the steady-state window's length summed over repeats.
	SteadySeconds float64 `json:"steady_s"`
	// SliceSeconds is the mean length of one time slice.
	SliceSeconds float64 `json:"slice_s"`
	// PerRequest is the distribution of tokens/latency per request, tok/s.
	PerRequest measure.Dist `json:"per_request_tok_s"`
	// Latency, TTFT and TPOT are per-request distributions in seconds.
	Latency measure.Dist `json:"latency_s"`
	TTFT    measure.Dist `json:"ttft_s"`
	TPOT    measure.Dist `json:"tpot_s"`
	// AchievedConcurrency is the time-weighted mean of requests in flight
	// over the steady-state window.
	AchievedConcurrency float64 `json:"achieved_concurrency"`
	// DispatchLagP99 is the client's own p99 delay between a free slot and
	// the next send, seconds.
	DispatchLagP99 float64 `json:"dispatch_lag_p99_s"`
	ClientLimited  bool    `json:"client_limited,omitempty"`
	// AcceptLength is the level's speculative accept length, when reported.
	AcceptLength *float64 `json:"accept_length,omitempty"`
	// Warnings are about the samples themselves (too few, no steady state).
	Warnings []string `json:"warnings,omitempty"`
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

// Row is the comparison at one concurrency level.
type Row struct {
	Level int `json:"level"`
	// Cells hold one entry per scenario, in Verdict.Scenarios order.
	Cells []Cell `json:"cells"`
	// Winner is the one scenario significantly ahead of every other at this
	// level; empty when the leaders are tied (Tied names them).
	Winner string   `json:"winner,omitempty"`
	Tied   []string `json:"tied,omitempty"`
}

// Cell is one scenario at one level, compared with the baseline.
type Cell struct {
	Scenario string `json:"scenario"`
	// Present is false when the scenario has no measurement at this level.
	Present    bool     `json:"present"`
	Throughput Estimate `json:"throughput"`
	// Compared is true for a variant with a baseline measurement to compare.
	Compared bool `json:"compared"`
	// DeltaPct is the variant's mean throughput against the baseline's, in
	// percent.
	DeltaPct float64 `json:"delta_pct"`
	// Speedup is the ratio of means; SpeedupLo and SpeedupHi bound it
	// conservatively with the two confidence intervals.
	Speedup   float64 `json:"speedup"`
	SpeedupLo float64 `json:"speedup_lo"`
	SpeedupHi float64 `json:"speedup_hi"`
	// P is the two-sided p-value of Welch's t-test on the slice samples;
	// Significant is P < Alpha.
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	// Hopeless is true when the sample sizes cannot reach significance at
	// Alpha whatever the values.
	Hopeless bool     `json:"hopeless,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Sign is +1 when the variant is significantly faster than the baseline, −1
// when significantly slower, and 0 otherwise.
func (c Cell) Sign() int {
	switch {
	case !c.Compared || !c.Significant:
		return 0
	case c.DeltaPct > 0:
		return 1
	case c.DeltaPct < 0:
		return -1
	}
	return 0
}

// Note severities, most severe first.
const (
	SeverityRed  = "red"  // the comparison is wrong or a variant is broken
	SeverityWarn = "warn" // the comparison may be unfair; read with care
	SeverityInfo = "info" // a check that passed, said so
)

// Note is one fairness finding.
type Note struct {
	Severity string `json:"severity"`
	Check    string `json:"check"`
	Scenario string `json:"scenario,omitempty"`
	Level    int    `json:"level,omitempty"`
	Text     string `json:"text"`
}
