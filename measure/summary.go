package measure

// LevelSummary condenses one level (one repeat). It is derived
// from the records and written to levels.json for quick reading; reports
// recompute everything from the records instead of trusting it.
type LevelSummary struct {
	Level  Level `json:"level"`
	Repeat int   `json:"repeat"`
	Counts

	WallSeconds float64 `json:"wall_s"` // first send to last end
	// Throughput is output tokens per second over the steady-state window;
	// WallThroughput over the whole wall time. See docs/LOADGEN.md.
	Throughput     float64 `json:"throughput_tok_s"`
	WallThroughput float64 `json:"wall_throughput_tok_s"`
	SteadyStartNs  int64   `json:"steady_start_ns"`
	SteadyEndNs    int64   `json:"steady_end_ns"`
	PerRequestTokS float64 `json:"per_request_tok_s"` // mean of tokens/latency over successful requests

	LatencyMean float64 `json:"latency_mean_s"`
	LatencyP50  float64 `json:"latency_p50_s"`
	LatencyP99  float64 `json:"latency_p99_s"`
	TTFTP50     float64 `json:"ttft_p50_s"`
	TTFTP99     float64 `json:"ttft_p99_s"`
	TPOTP50     float64 `json:"tpot_p50_s"`
	TPOTP99     float64 `json:"tpot_p99_s"`
	// Percentiles are the latency, TTFT, TPOT and ITL (LevelFigures'
	// definitions) at the sweep's percentiles, seconds, keyed by metric and
	// then PercentileName; a metric with no value is left out.
	Percentiles map[string]map[string]float64 `json:"percentiles_s,omitempty"`

	// AchievedConcurrency is the time-weighted mean number of requests in
	// flight over the steady-state window.
	AchievedConcurrency float64 `json:"achieved_concurrency"`
	// DispatchLagP99 is the p99 of the client's delay from a slot freeing
	// to the next request being sent, over requests sent after the ramp-up.
	DispatchLagP99 float64 `json:"dispatch_lag_p99_s"`
	// PaceShare is the share of the slots' time the client held a freed
	// slot empty (Figures.PaceShare).
	PaceShare float64 `json:"pace_share,omitempty"`
	// ClientLimited flags a level where the load generator, not the server,
	// may have set the pace.
	ClientLimited bool `json:"client_limited,omitempty"`

	// Rate is an open-loop level's target arrival rate, requests per
	// second; ArrivalRate the rate at which its requests were really sent.
	// LateP99 is the p99 of how late the client sent them after their
	// scheduled arrival, seconds; Capped counts those that waited for the
	// client's in-flight cap. Saturated is true when the server could not
	// keep up (a queue that grew for as long as the level ran, see
	// SaturationOf), and Saturation says what was seen.
	Rate        float64 `json:"rate,omitempty"`
	ArrivalRate float64 `json:"arrival_rate,omitempty"`
	LateP99     float64 `json:"late_p99_s,omitempty"`
	Capped      int     `json:"capped,omitempty"`
	Saturated   bool    `json:"saturated,omitempty"`
	Saturation  string  `json:"saturation,omitempty"`

	// AcceptLength is the speculative accept length over this level, when the
	// engine exposes it (see docs/LOADGEN.md for each engine's source).
	AcceptLength       *float64 `json:"accept_length,omitempty"`
	AcceptLengthSource string   `json:"accept_length_source,omitempty"`

	// Server is what the server's own metrics said over the steady-state
	// window (the sweep's timeline, docs/RESULTS.md); nil without a
	// timeline or a steady state.
	Server *ServerSummary `json:"server,omitempty"`

	// PowerW is the mean GPU power over the steady-state window, summed
	// over the scenario's GPUs, watts; JoulesPerKTok is the GPU energy per
	// 1000 output tokens over it. Both are zero where no power was read
	// (docs/METHOD.md, Energy).
	PowerW        float64 `json:"power_w,omitempty"`
	JoulesPerKTok float64 `json:"joules_per_1k_tok,omitempty"`
	// CacheReset is the call that cleared the server's prefix cache before
	// this level (e.g. "POST /flush_cache"); when empty, CacheResetNote says
	// why there was none or how it failed. UniquePrompts is true when every
	// request had a prompt prefix of its own, so no cache could help.
	CacheReset     string `json:"cache_reset,omitempty"`
	CacheResetNote string `json:"cache_reset_note,omitempty"`
	UniquePrompts  bool   `json:"unique_prompts,omitempty"`
	// NoPrefixCache is set when the campaign says the server keeps no
	// prefix cache (prefix_cache: none): there was nothing to clear.
	NoPrefixCache bool `json:"no_prefix_cache,omitempty"`
	// InputLengths says how prompts asked for in tokens (a synthetic set, a
	// trace) were made that long: LengthsExact, LengthsTokenized or
	// LengthsEstimated; empty when the set asks for no lengths.
	InputLengths string `json:"input_lengths,omitempty"`
	// Categories are the level's figures per prompt category, when the
	// prompt set has categories (Categories).
	Categories []CategorySummary `json:"categories,omitempty"`
	// Sessions are the level's figures per session and per turn index, for
	// a sweep of multi-turn sessions (SessionsOf).
	Sessions *SessionSummary `json:"sessions,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
}
