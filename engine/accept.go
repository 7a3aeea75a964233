package engine

// Where a level's speculative accept length comes from. Each response's
// own counts come first (the profile's ResponseAccept names them); an
// engine that has only server-wide figures gives the increase of its
// counters over the level (Accept). A gauge over the server's last batches
// is never a level's figure: it samples whatever the server did last, not
// what the level's requests got. docs/ENGINES.md lists each field's source
// and the engine version that has it.
const (
	// SourceSGLangSpecDetails: SGLang's sglext.spec_tokens_details, which
	// a request gets with "return_spec_tokens_details": true (PR #33518).
	SourceSGLangSpecDetails = "each response's sglext.spec_tokens_details: Σ completion tokens / Σ spec_verify_ct"
	// SourceVLLMResponseMetrics: vLLM's metrics.speculative_decoding in the
	// final usage chunk, with --per-request-spec-decode-metrics (PR #48915),
	// read as vLLM defines its mean_acceptance_length (its end-to-end test
	// test_per_request_spec_decode_metrics): num_spec_steps counts only the
	// steps that verified drafts, so neither the prefill's token nor a step
	// that drafted nothing (an n-gram miss, K = 0 in a dynamic schedule)
	// counts.
	SourceVLLMResponseMetrics = "each response's metrics.speculative_decoding: 1 + Σ num_accepted_draft_tokens / Σ num_spec_steps"
	// SourceAnyResponse: a server of unknown engine whose responses carry
	// one of the shapes above or llama.cpp's timings.
	SourceAnyResponse = "each response's own speculative counts: Σ completion tokens / Σ target steps"

	// SourceSGLangCounters: the increase of SGLang's counters over the
	// level, each finished request adding its spec_verify_ct (PR #25689).
	SourceSGLangCounters = "sglang counters, increase over the level: Δgeneration_tokens_total / Δspec_verify_calls_total"
)

// VLLMPerRequestSpecFlag is the vLLM server flag that puts each request's
// speculative counts in its response (summary or detailed; none, the
// default, leaves them out).
const VLLMPerRequestSpecFlag = "per-request-spec-decode-metrics"

// increase is a counter's increase from before to after a level; ok is
// false when either scrape lacks it or it went down (the server restarted
// between them, so the increase is unknown).
func increase(s Scrapes, name string) (float64, bool) {
	if s.Before == nil || s.After == nil {
		return 0, false
	}
	b, okB := s.Before[name]
	a, okA := s.After[name]
	if !okB || !okA || a < b {
		return 0, false
	}
	return a - b, true
}
