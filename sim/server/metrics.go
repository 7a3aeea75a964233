package server

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/model"
)

// writePrometheus writes the metrics in the Prometheus text exposition
// format with SGLang's `sglang:` names, as a server started with cfg writes
// them: the tokenizer manager's counters and histograms once, labelled with
// the model name, and the scheduler's gauges once per scheduler rank that
// logs them (schedulerRanks), each labelled with its ranks and each the same
// value, as SGLang's tensor-parallel ranks share one batch.
func writePrometheus(w io.Writer, s model.Snapshot, cfg *cmdline.Config) error {
	lbl := `model_name="` + escapeLabel(cfg.ModelName()) + `"`
	ranks := schedulerRanks(cfg)
	var b strings.Builder
	gauge := func(name, help string, v float64) {
		fmt.Fprintf(&b, "# HELP sglang:%s %s\n# TYPE sglang:%s gauge\n", name, help, name)
		for _, r := range ranks {
			fmt.Fprintf(&b, "sglang:%s{%s} %s\n", name, r, fmtFloat(v))
		}
	}
	counter := func(name, help string, v uint64) {
		fmt.Fprintf(&b, "# HELP sglang:%s %s\n# TYPE sglang:%s counter\nsglang:%s{%s} %d\n", name, help, name, name, lbl, v)
	}
	hist := func(name, help string, h model.HistogramSnapshot) {
		fmt.Fprintf(&b, "# HELP sglang:%s %s\n# TYPE sglang:%s histogram\n", name, help, name)
		var cum uint64
		for i, ub := range h.Bounds {
			cum += h.Counts[i]
			fmt.Fprintf(&b, "sglang:%s_bucket{%s,le=\"%s\"} %d\n", name, lbl, fmtFloat(ub), cum)
		}
		cum += h.Counts[len(h.Bounds)]
		fmt.Fprintf(&b, "sglang:%s_bucket{%s,le=\"+Inf\"} %d\n", name, lbl, cum)
		fmt.Fprintf(&b, "sglang:%s_sum{%s} %s\nsglang:%s_count{%s} %d\n", name, lbl, fmtFloat(h.Sum), name, lbl, h.N)
	}
	gauge("num_running_reqs", "The number of running requests.", float64(s.Running))
	gauge("num_queue_reqs", "The number of requests in the waiting queue.", float64(s.Queued))
	gauge("num_used_tokens", "The number of used tokens.", float64(s.KVTokens))
	gauge("token_usage", "The token usage.", float64(s.KVTokens)/float64(s.Pool))
	gauge("gen_throughput", "The generation throughput (token/s).", s.GenThroughput)
	gauge("cache_hit_rate", "The prefix cache hit rate.", s.CacheHitRate)
	if cfg.Speculative() {
		gauge("spec_accept_length", "The average acceptance length of speculative decoding.", s.AcceptLen)
		gauge("spec_accept_rate", "The average acceptance rate of speculative decoding.", s.AcceptRate)
	}
	counter("prompt_tokens_total", "Number of prefill tokens processed.", s.PromptTokens)
	counter("generation_tokens_total", "Number of generation tokens processed.", s.GenTokens)
	counter("num_requests_total", "Number of requests processed.", s.Requests)
	counter("cached_tokens_total", "Number of cached prompt tokens.", s.CachedTokens)
	if cfg.Speculative() {
		counter("spec_verify_calls_total", "Number of speculative decoding verification calls.", s.VerifySteps)
	}
	hist("time_to_first_token_seconds", "Histogram of time to first token in seconds.", s.TTFT)
	hist("inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", s.ITL)
	hist("e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", s.E2E)
	_, err := io.WriteString(w, b.String())
	return err
}

// schedulerRanks are the label sets of the scheduler ranks whose gauges the
// exposition carries. Every scheduler process has a metrics collector
// labelled model_name, engine_type, tp_rank, pp_rank and moe_ep_rank, but
// only the ranks with current_scheduler_metrics_enabled set their gauges:
// tensor-parallel rank 0, or every rank with
// --enable-metrics-for-all-schedulers
// (python/sglang/srt/observability/scheduler_metrics_mixin.py at 44cedc2b,
// init_metrics; managers/scheduler_components/metrics_reporter.py at
// c9cbe8f2). moe_ep_rank is tp_rank // (tp / ep)
// (managers/data_parallel_controller.py at 000a3db1). The sim runs one
// attention-TP group, so it writes no dp_rank.
func schedulerRanks(cfg *cmdline.Config) []string {
	tp := max(1, cfg.TP)
	n := 1
	if cfg.Given["enable_metrics_for_all_schedulers"] == "true" {
		n = tp
	}
	perEP := 1
	if ep, err := strconv.Atoi(cfg.Given["ep_size"]); err == nil && ep > 0 && tp%ep == 0 {
		perEP = tp / ep
	}
	engineType := "unified"
	if m := cfg.Given["disaggregation_mode"]; m == "prefill" || m == "decode" {
		engineType = m
	}
	out := make([]string, n)
	for r := range out {
		out[r] = fmt.Sprintf(`model_name="%s",engine_type="%s",tp_rank="%d",pp_rank="0",moe_ep_rank="%d"`,
			escapeLabel(cfg.ModelName()), engineType, r, r/perEP)
	}
	return out
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
