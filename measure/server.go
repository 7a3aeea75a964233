package measure

// ServerSummary is what the server's own /metrics said about a level's
// steady-state window, read from the timeline the sweep scraped through it
// (package timeline). Each figure is nil when the server publishes no metric
// for it, and names the metric it came from and how it was read.
type ServerSummary struct {
	// Scrapes is the number of timeline scrapes inside the window.
	Scrapes int `json:"scrapes"`
	// Running is the server's running batch, requests; Queued its waiting
	// queue, requests; KVUsage the used fraction of its KV cache (0 to 1).
	Running *GaugeStats `json:"running,omitempty"`
	Queued  *GaugeStats `json:"queued,omitempty"`
	KVUsage *GaugeStats `json:"kv_usage,omitempty"`
	// Preemptions is the number of requests preempted or retracted in the
	// window; PrefixHitRate the share of prompt tokens served from the prefix
	// cache; AcceptLength the speculative accept length, tokens per target
	// step; GenTokS the server's generation throughput, tokens per second.
	Preemptions   *ServerFigure `json:"preemptions,omitempty"`
	PrefixHitRate *ServerFigure `json:"prefix_hit_rate,omitempty"`
	AcceptLength  *ServerFigure `json:"accept_length,omitempty"`
	GenTokS       *ServerFigure `json:"gen_tok_s,omitempty"`
	// TTFT and ITL are the server's latency histograms within the window,
	// seconds.
	TTFT *HistogramQuantiles `json:"ttft,omitempty"`
	ITL  *HistogramQuantiles `json:"itl,omitempty"`
}

// GaugeStats summarise a gauge over a window: the mean, median and largest of
// its scraped values (Prometheus' avg_over_time, quantile_over_time(0.5) and
// max_over_time), and the metric it was read from.
type GaugeStats struct {
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	Max    float64 `json:"max"`
	Source string  `json:"source"`
}

// ServerFigure is one number over a window and how it was read.
type ServerFigure struct {
	Value  float64 `json:"value"`
	Source string  `json:"source"`
	// Unchecked, for the generation throughput, says why the figure is not
	// set beside the client's tokens (the verdict's counts doubt): the
	// engine's profile does not know what its counter counts, or knows it
	// does not count the tokens of the window (docs/ENGINES.md). Empty:
	// it is checked.
	Unchecked string `json:"unchecked,omitempty"`
}

// HistogramQuantiles are quantiles of a histogram's observations within a
// window (from its buckets' increases), with the observation count.
type HistogramQuantiles struct {
	Count  float64 `json:"count"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Source string  `json:"source"`
}
