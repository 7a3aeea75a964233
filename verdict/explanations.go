package verdict

// The explanations' figures as the verdict carries them: the accept length,
// the server's timeline, energy, crossovers and break-evens. Package
// verdict/explain computes them; the rule reads none of them.

import (
	"github.com/bakeoff-dev/bakeoff/measure"
)

// LevelAccept is one level's speculative acceptance over a scenario's
// launches (docs/METHOD.md, Accept length).
type LevelAccept struct {
	// Length is the geometric mean of the launches' accept lengths with
	// its confidence interval from their spread (Student t, launches − 1
	// degrees of freedom), as the throughput's across launches; with one
	// launch, that launch's figure, Lo = Hi = Center and N = 1.
	Length Estimate `json:"length"`
	// Launches are each launch's accept length, in round order: the
	// token-weighted one of its requests (measure.LevelAcceptance), else
	// the mean over its repeats of the sweep's figure from the server's
	// counters.
	Launches []float64 `json:"launches"`
	// Source names where the launches' figures come from.
	Source string `json:"source"`
	// AcceptRate, StepShares and PositionRates are over every launch's
	// requests pooled (measure.Acceptance); absent where the responses
	// did not give them.
	AcceptRate    float64   `json:"accept_rate,omitempty"`
	StepShares    []float64 `json:"step_shares,omitempty"`
	PositionRates []float64 `json:"position_rates,omitempty"`
	// Categories are the accept length per prompt category, the same way,
	// when the prompt set has categories and the responses gave counts.
	Categories []CategoryAccept `json:"categories,omitempty"`
}

// CategoryAccept is one prompt category's accept length over the launches.
type CategoryAccept struct {
	Category string    `json:"category"`
	Length   Estimate  `json:"length"`
	Launches []float64 `json:"launches"`
}

// Timeline series names (TimelineSeries.Name).
const (
	TimelineRunning = "running"
	TimelineQueued  = "queued"
	TimelineKVUsage = "kv_usage"
)

// LevelTimeline is what the server was doing through one level of one
// launch, from its /metrics timeline (docs/RESULTS.md, timeline.jsonl): the
// running batch, the queue and the KV cache's use over time, and the
// level's steady windows, which the summaries cover. One launch stands for
// the level (the first complete round with a timeline): the panel shows the
// shape of the level, and the summaries (Level.Server) average the launches.
type LevelTimeline struct {
	// Round is the launch's round.
	Round int `json:"round"`
	// StartNs is the level's first send in that launch, Unix ns; every
	// time below is seconds since it.
	StartNs int64 `json:"start_ns"`
	// Seconds is the level's length: to its last request's end.
	Seconds float64 `json:"seconds"`
	// Windows are each repeat's steady-state window.
	Windows []Span `json:"windows,omitempty"`
	// Series are the gauges the server published, in the order running,
	// queued, kv_usage; one the server has not is left out.
	Series []TimelineSeries `json:"series"`
}

// Span is an interval in seconds since a level's start.
type Span struct {
	From float64 `json:"from_s"`
	To   float64 `json:"to_s"`
}

// TimelineSeries is one gauge over a level: requests running or queued
// (summed over the server's series), or the KV cache's used fraction (0 to
// 1, averaged over them).
type TimelineSeries struct {
	Name string `json:"name"`
	// Metric is the server's metric it was read from.
	Metric string `json:"metric"`
	// T are the scrapes' times in seconds since the level's start, V the
	// values; at most DefaultTimelinePoints, evenly thinned.
	T []float64 `json:"t"`
	V []float64 `json:"v"`
}

// LevelEnergy is one scenario's GPU energy at one level, when power was
// read (docs/METHOD.md, Energy).
type LevelEnergy struct {
	// PowerW is the mean GPU power over the steady-state windows, watts,
	// summed over the scenario's GPUs: the geometric mean of the launches
	// with its interval across launches.
	PowerW Estimate `json:"power_w"`
	// JoulesPerKTok is the GPU energy per 1000 output tokens over the same
	// windows, joules, with its interval across launches.
	JoulesPerKTok Estimate `json:"joules_per_1k_tok"`
	// Launches are the per-launch figures the estimates come from.
	Launches []LaunchEnergy `json:"launches"`
}

// LaunchEnergy is one launch's energy at one level, its repeats pooled.
type LaunchEnergy struct {
	Round         int     `json:"round"`
	PowerW        float64 `json:"power_w"`
	JoulesPerKTok float64 `json:"joules_per_1k_tok"`
}

// HasEnergy reports whether any level of any scenario has an energy figure.
func (v *Verdict) HasEnergy() bool {
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.Energy != nil {
				return true
			}
		}
	}
	return false
}

// Crossover says, for one variant, where it wins, ties, loses or cannot be
// told from the baseline across the levels, from the corrected comparisons'
// outcomes only.
type Crossover struct {
	Scenario string `json:"scenario"`
	// Sentence is the whole story in one line, e.g. "eagle3-topk4: +3.8% at
	// C=1 (p=0.002); tie at C=2; loses from C=5 on, down to −54% at C=250".
	Sentence string    `json:"sentence"`
	Segments []Segment `json:"segments"`
	// StopsWinning brackets the first place where the variant, having won,
	// no longer wins: it won at From and did not at To. Nil when it never
	// won or never stopped winning.
	StopsWinning *Bracket `json:"stops_winning,omitempty"`
	// StartsLosing brackets the first place where the variant, not having
	// lost, starts losing: From is the last level before it lost, To the
	// first where it did. Nil when it never loses or loses from the first level.
	StartsLosing *Bracket `json:"starts_losing,omitempty"`
	// Why gives, beside the sentence, the figures that explain the turn:
	// the variant's accept length and the server's running batch over the
	// levels (verdict/explain); empty when there is no turn or no such figure.
	Why string `json:"why,omitempty"`
	// BreakEven is where the speedup crosses 1, or the bound the levels
	// give (verdict/explain); nil for a variant never compared.
	BreakEven *BreakEven `json:"break_even,omitempty"`
}

// Bracket is a pair of adjacent measured levels.
type Bracket struct {
	From measure.Level `json:"from"`
	To   measure.Level `json:"to"`
}

// Segment is a run of adjacent measured levels with the same outcome.
type Segment struct {
	// Outcome is the comparisons' outcome (OutcomeFaster, …); Sign is +1
	// (faster), −1 (slower) or 0 (tie or inconclusive).
	Outcome string          `json:"outcome"`
	Sign    int             `json:"sign"`
	Levels  []measure.Level `json:"levels"`
	// Extreme is the level with the largest delta in the segment's
	// direction (for a tie, the one with the largest |delta|).
	Extreme  measure.Level `json:"extreme"`
	DeltaPct float64       `json:"delta_pct"`
	// P is the corrected p-value at Extreme.
	P float64 `json:"p"`
	// MDEPct is, for an inconclusive segment, the largest of its levels'
	// detectable differences.
	MDEPct float64 `json:"mde_pct,omitempty"`
	// Doubts are, for a doubted segment, why its levels were not decided:
	// each distinct doubt of its cells once, in level order.
	Doubts []Doubt `json:"doubts,omitempty"`
}

// Break-even kinds (BreakEven.Kind).
const (
	// BreakEvenCrosses: the speedup crosses 1 between two measured levels,
	// the variant winning on one side and losing on the other.
	BreakEvenCrosses = "crosses"
	// BreakEvenAbove: the variant wins and loses nowhere: the break-even,
	// if any, lies above the last level it wins (a bound).
	BreakEvenAbove = "above"
	// BreakEvenBelow: the variant loses and wins nowhere: the break-even,
	// if any, lies below the first level it loses (a bound).
	BreakEvenBelow = "below"
	// BreakEvenNone: no level is won or lost, or the wins and losses
	// alternate: nothing is claimed.
	BreakEvenNone = "none"
)

// BreakEven is where a variant's speedup over the baseline crosses 1, in
// the levels' unit (concurrent requests, or requests per second),
// interpolated in log-load between the two measured levels that bracket
// it, with an interval from the launches (docs/METHOD.md, Break-even load).
// Nothing is extrapolated: outside the levels it is a bound.
type BreakEven struct {
	Kind string `json:"kind"`
	// Pays is "below" when the variant wins under the break-even and loses
	// over it (speculative decoding's usual shape), "above" the reverse;
	// empty for BreakEvenNone.
	Pays string `json:"pays,omitempty"`
	// Load is the estimate and Lo, Hi its interval at Confidence, for
	// BreakEvenCrosses; the interval never leaves [From, To].
	Load       float64 `json:"load,omitempty"`
	Lo         float64 `json:"lo,omitempty"`
	Hi         float64 `json:"hi,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	// From and To are the last level won and the first level lost (for
	// Pays "above", the last lost and the first won): the verdict's own
	// bracket. For a bound, From is the level the bound stands at.
	From measure.Level `json:"from,omitzero"`
	To   measure.Level `json:"to,omitzero"`
	// Rounds is the fewest paired rounds behind the interval.
	Rounds int `json:"rounds,omitempty"`
	// Batch is the server's running batch at the break-even and at the
	// interval's ends; nil when neither the server's timeline nor the
	// level (a concurrency) says.
	Batch *BatchAt `json:"batch,omitempty"`
	// Suggestion is the engine setting that turns speculation off above
	// the measured break-even; nil when the engine has none or no batch is
	// known.
	Suggestion *Suggestion `json:"suggestion,omitempty"`
	// Sentence says all of it in words.
	Sentence string `json:"sentence"`
}

// BatchAt is the running batch at a load, interpolated in log-log between
// the two levels around it.
type BatchAt struct {
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Source string  `json:"source"`
}

// Suggestion is an engine setting a measurement suggests, never applied.
type Suggestion struct {
	Engine  string `json:"engine"`
	Key     string `json:"key"`
	Value   int    `json:"value"`
	Lo      int    `json:"lo"`
	Hi      int    `json:"hi"`
	Setting string `json:"setting"`
	Since   string `json:"since,omitempty"`
}
