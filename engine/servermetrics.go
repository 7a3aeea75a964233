package engine

// ServerMetrics names the /metrics series that say what the server was doing
// during a level: its batch, its queue, its KV cache, preemptions, prefix-cache
// hits, speculative acceptance and its own generation throughput. Each figure
// is a list of names: the first one the server publishes is read, so a profile
// can name a metric's newer and older spellings. An empty list means the engine
// has no such metric. Counter names carry the _total the exposition gives them
// (prometheus_client adds it to a Counter's declared name).
//
// docs/ENGINES.md gives the source and version of every name.
type ServerMetrics struct {
	// Running and Queued are gauges of requests, summed over the series that
	// carry them (one per engine core or data-parallel rank).
	Running, Queued []string
	// KVUsage is a gauge of the KV cache's used fraction (0 to 1), averaged
	// over its series.
	KVUsage []string
	// Preemptions is a counter of requests preempted or retracted to free KV
	// cache.
	Preemptions []string
	// PrefixHits are counter pairs of prompt tokens found in the prefix cache
	// (Num) and looked up there (Den): the window's hit rate is the ratio of
	// their increases, from the first pair the server has. PrefixHitRate is a
	// gauge read only when there is none.
	PrefixHits    []CounterRatio
	PrefixHitRate []string
	// Accept are the counter pairs whose increases give the accept length over
	// the window (the first pair the server has), AcceptGauge a gauge read only
	// when there is none.
	Accept      []CounterRatio
	AcceptGauge []string
	// GenerationTokens is a counter of generated tokens: its increase over the
	// window's length is the server's generation throughput.
	GenerationTokens []string
	// GenerationUnchecked, when set, says why that throughput must not be
	// set beside the client's tokens over the same window (the verdict's
	// counts doubt): the engine adds a request's tokens to its counter only
	// when the request finishes, so over a window the counter counts the
	// requests that ended in it, not the tokens generated in it, and a
	// short level's figure is off by whole requests; or, for a server of
	// unknown engine, nobody knows what its counter counts. Empty: the
	// counter counts each step's tokens as they are generated, accepted
	// speculative tokens included, and the check applies.
	GenerationUnchecked string
	// TTFT and ITL are histograms (the name before _bucket) of time to first
	// token and inter-token latency, seconds.
	TTFT, ITL []string
	// RankCopies are the series that each rank of a group of scheduler
	// processes writes alike: a reader counts one copy per group (Counted).
	// Empty: every label set is a share of its own (vLLM's engine cores).
	RankCopies []RankCopy
}

// CounterRatio is a figure over a window made of two counters' increases:
// Offset + ΔNum / ΔDen. SGLang's accept length is generated tokens per verify
// step (offset 0), vLLM's accepted draft tokens per draft plus the bonus token
// (offset 1).
type CounterRatio struct {
	Num, Den string
	Offset   float64
}

// SGLang's scheduler and tokenizer metrics (python/sglang/srt/metrics/collector.py,
// python/sglang/srt/observability/metrics_collector.py since the move).
var sglangServer = &ServerMetrics{
	Running:          []string{"sglang:num_running_reqs"},
	Queued:           []string{"sglang:num_queue_reqs"},
	KVUsage:          []string{"sglang:token_usage"},
	Preemptions:      []string{"sglang:num_retracted_requests_total"},
	PrefixHits:       []CounterRatio{{Num: "sglang:cached_tokens_total", Den: "sglang:prompt_tokens_total"}},
	PrefixHitRate:    []string{"sglang:cache_hit_rate"},
	Accept:           []CounterRatio{{Num: "sglang:generation_tokens_total", Den: "sglang:spec_verify_calls_total"}},
	AcceptGauge:      []string{"sglang:spec_accept_length"},
	GenerationTokens: []string{"sglang:generation_tokens_total"},
	// TokenizerMetricsCollector.observe_one_finished_request adds a
	// request's generation_tokens (its completion tokens) once, when the
	// tokenizer manager sees it finished
	// (python/sglang/srt/observability/metrics_collector.py at 44cedc2b).
	GenerationUnchecked: sglangAtFinish,
	TTFT:                []string{"sglang:time_to_first_token_seconds"},
	ITL:                 []string{"sglang:inter_token_latency_seconds"},
	RankCopies:          sglangRankCopies,
}

// sglangRanks are the labels of SGLang's scheduler collector that name its
// process within a group: every scheduler process of a server started with
// --enable-metrics has a collector labelled tp_rank, pp_rank and
// moe_ep_rank, and dp_rank under --dp or DP attention
// (python/sglang/srt/observability/scheduler_metrics_mixin.py at 44cedc2b,
// init_metrics). dp_rank names a group with requests of its own and is not
// one of them; moe_ep_rank follows tp_rank (tp_rank // (tp / ep),
// managers/data_parallel_controller.py at 000a3db1).
var sglangRanks = []string{"pp_rank", "tp_rank", "moe_ep_rank"}

// sglangRankCopies are the scheduler series bakeoff reads. The ranks of an
// attention-TP group (the whole TP group without DP attention) run one
// schedule: rank 0 alone takes the requests from the tokenizer and hands
// them to the others (managers/scheduler.py at 0003215c, init_ipc_channels
// and dp_tp_group), so every rank holds the same batch and queue. Under DP
// attention each group is a dp_rank of its own, fed its own requests by the
// DataParallelController, and the groups add up. The tokenizer manager's
// series (prompt, generation and cached tokens, the latency histograms)
// carry no rank and are summed as they are.
var sglangRankCopies = []RankCopy{
	// Gauges set by log_stats, from each group's rank 0 (attn_tp_rank 0), and
	// from every rank with --enable-metrics-for-all-schedulers
	// (current_scheduler_metrics_enabled; metrics_reporter.py at c9cbe8f2).
	{Name: "sglang:num_running_reqs", Ranks: sglangRanks},
	{Name: "sglang:num_queue_reqs", Ranks: sglangRanks},
	{Name: "sglang:token_usage", Ranks: sglangRanks},
	{Name: "sglang:cache_hit_rate", Ranks: sglangRanks},
	{Name: "sglang:spec_accept_length", Ranks: sglangRanks},
	// Incremented by update_running_batch on every rank whose collector
	// exists, which is every rank (scheduler.py at 0003215c): each rank
	// counts the group's retractions.
	{Name: "sglang:num_retracted_requests_total", Ranks: sglangRanks},
}

// vLLM's V1 engine metrics (vllm/v1/metrics/loggers.py); gpu_cache_usage_perc
// is the older name of kv_cache_usage_perc. generation_tokens_total grows at
// every engine step by each request's new tokens (IterationStats in
// vllm/v1/metrics/stats.py: len(output.new_token_ids), which under
// speculation are the accepted drafts and the bonus token,
// vllm/v1/core/sched/scheduler.py), so it is checked against the client's.
var vllmServer = &ServerMetrics{
	Running:          []string{"vllm:num_requests_running"},
	Queued:           []string{"vllm:num_requests_waiting"},
	KVUsage:          []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
	Preemptions:      []string{"vllm:num_preemptions_total"},
	PrefixHits:       []CounterRatio{{Num: "vllm:prefix_cache_hits_total", Den: "vllm:prefix_cache_queries_total"}},
	Accept:           []CounterRatio{{Num: vllmAcceptedTokens, Den: vllmDrafts, Offset: 1}},
	GenerationTokens: []string{"vllm:generation_tokens_total"},
	TTFT:             []string{"vllm:time_to_first_token_seconds"},
	ITL:              []string{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"},
}

// llama-server's --metrics (tools/server/README.md): no queue of its own
// beyond deferred requests, no preemptions, no prefix-cache counters, no
// histograms; the speculative counters since PR #26389 (llamacpp.go).
var llamacppServer = &ServerMetrics{
	Running:          []string{"llamacpp:requests_processing"},
	Queued:           []string{"llamacpp:requests_deferred"},
	KVUsage:          []string{"llamacpp:kv_cache_usage_ratio"},
	Accept:           []CounterRatio{{Num: llamacppAcceptedTokens, Den: llamacppDrafts, Offset: 1}},
	GenerationTokens: []string{"llamacpp:tokens_predicted_total"},
	// tools/server/server-context.cpp (ggml-org/llama.cpp at 001d906a):
	// the slot counts every token it hands to the client, accepted draft
	// tokens included (stats.n_gen, one per process_token), but adds them
	// to tokens_predicted_total only when the request ends (release →
	// metrics_on_prediction; on_prediction at request end in older builds,
	// fb402660).
	GenerationUnchecked: "llama-server adds a request's generated tokens to tokens_predicted_total only when the request ends (tools/server/server-context.cpp)",
}

// sglangAtFinish is why SGLang's generation counter is not checked.
const sglangAtFinish = "SGLang adds a request's generated tokens to generation_tokens_total only when the request finishes (observe_one_finished_request)"

// genericServer reads whichever known engine's names the server publishes,
// for what the report shows; what its generation counter counts is not
// known, so it is never set beside the client's tokens.
var genericServer = func() *ServerMetrics {
	m := mergeServer(sglangServer, vllmServer, llamacppServer)
	m.GenerationUnchecked = "engine generic: what the server's generation counter counts is not known (name the engine to have it checked)"
	return m
}()

// mergeServer lists every profile's names, in order, for a server of unknown
// engine.
func mergeServer(ps ...*ServerMetrics) *ServerMetrics {
	out := &ServerMetrics{}
	for _, p := range ps {
		out.Running = append(out.Running, p.Running...)
		out.Queued = append(out.Queued, p.Queued...)
		out.KVUsage = append(out.KVUsage, p.KVUsage...)
		out.Preemptions = append(out.Preemptions, p.Preemptions...)
		out.PrefixHits = append(out.PrefixHits, p.PrefixHits...)
		out.PrefixHitRate = append(out.PrefixHitRate, p.PrefixHitRate...)
		out.Accept = append(out.Accept, p.Accept...)
		out.AcceptGauge = append(out.AcceptGauge, p.AcceptGauge...)
		out.GenerationTokens = append(out.GenerationTokens, p.GenerationTokens...)
		out.TTFT = append(out.TTFT, p.TTFT...)
		out.ITL = append(out.ITL, p.ITL...)
		out.RankCopies = append(out.RankCopies, p.RankCopies...)
	}
	return out
}
