package sim

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WritePrometheus writes the metrics in the Prometheus text exposition
// format with SGLang's `sglang:` names, each labelled with the model name.
func (s *Stats) WritePrometheus(w io.Writer, modelName string, speculative bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lbl := `model_name="` + escapeLabel(modelName) + `"`
	var b strings.Builder
	gauge := func(name, help string, v float64) {
		fmt.Fprintf(&b, "# HELP sglang:%s %s\n# TYPE sglang:%s gauge\nsglang:%s{%s} %s\n", name, help, name, name, lbl, fmtFloat(v))
	}
	counter := func(name, help string, v uint64) {
		fmt.Fprintf(&b, "# HELP sglang:%s %s\n# TYPE sglang:%s counter\nsglang:%s{%s} %d\n", name, help, name, name, lbl, v)
	}
	hist := func(name, help string, h *histogram) {
		fmt.Fprintf(&b, "# HELP sglang:%s %s\n# TYPE sglang:%s histogram\n", name, help, name)
		var cum uint64
		for i, ub := range h.bounds {
			cum += h.counts[i]
			fmt.Fprintf(&b, "sglang:%s_bucket{%s,le=\"%s\"} %d\n", name, lbl, fmtFloat(ub), cum)
		}
		cum += h.counts[len(h.bounds)]
		fmt.Fprintf(&b, "sglang:%s_bucket{%s,le=\"+Inf\"} %d\n", name, lbl, cum)
		fmt.Fprintf(&b, "sglang:%s_sum{%s} %s\nsglang:%s_count{%s} %d\n", name, lbl, fmtFloat(h.sum), name, lbl, h.n)
	}
	gauge("num_running_reqs", "The number of running requests.", float64(s.running))
	gauge("num_queue_reqs", "The number of requests in the waiting queue.", float64(s.queued))
	gauge("num_used_tokens", "The number of used tokens.", float64(s.kvTokens))
	gauge("token_usage", "The token usage.", float64(s.kvTokens)/float64(s.pool))
	gauge("gen_throughput", "The generation throughput (token/s).", s.genThroughput)
	gauge("cache_hit_rate", "The prefix cache hit rate.", s.cacheHitRate)
	if speculative {
		gauge("spec_accept_length", "The average acceptance length of speculative decoding.", s.acceptLen)
		gauge("spec_accept_rate", "The average acceptance rate of speculative decoding.", s.acceptRate)
	}
	counter("prompt_tokens_total", "Number of prefill tokens processed.", s.promptTokens)
	counter("generation_tokens_total", "Number of generation tokens processed.", s.genTokens)
	counter("num_requests_total", "Number of requests processed.", s.requests)
	counter("cached_tokens_total", "Number of cached prompt tokens.", s.cachedTokens)
	if speculative {
		counter("spec_verify_calls_total", "Number of speculative decoding verification calls.", s.verifySteps)
	}
	hist("time_to_first_token_seconds", "Histogram of time to first token in seconds.", s.ttft)
	hist("inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", s.itl)
	hist("e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", s.e2e)
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
