package engine

import (
	"encoding/json"
	"errors"
	"fmt"
)

// TensorRT-LLM's /metrics is not Prometheus text: trtllm-serve answers GET
// /metrics with the iteration statistics the executor queued since the last
// call, a JSON array with one element per iteration (openai_server.py's
// get_iteration_stats takes them with llm.get_stats_async, which empties
// the queue; the queue fills only with enable_iter_perf_stats set in the
// extra LLM API options, and is [] otherwise). Each scrape therefore holds
// the iterations since the scrape before it, not a running total. An
// iteration's specDecodingStats (executor.h's SpecDecodingStats) counts the
// draft tokens proposed and accepted in it and the requests that had
// drafts; its acceptanceLength is 1 + accepted / requests, the tokens a
// request gained per step. Some releases queue each iteration as a JSON
// string rather than an object; both are read.

// Names of the figures parseIterationStats gives, sums over one scrape's
// iterations.
const (
	trtllmIterations      = "trtllm:iterations"
	trtllmSpecIterations  = "trtllm:spec_iterations"
	trtllmSpecDraftTokens = "trtllm:spec_draft_tokens"
	trtllmSpecAccepted    = "trtllm:spec_accepted_tokens"
	trtllmSpecRequests    = "trtllm:spec_requests_with_drafts"
)

// SourceTRTLLMIterationStats names the accept length read from
// TensorRT-LLM's iteration statistics over a level.
const SourceTRTLLMIterationStats = "TensorRT-LLM /metrics iteration statistics over the level: 1 + Σ numAcceptedTokens / Σ numRequestsWithDraftTokens"

// iterationStats is the part of one iteration's statistics read here.
type iterationStats struct {
	Spec *struct {
		DraftTokens    float64 `json:"numDraftTokens"`
		AcceptedTokens float64 `json:"numAcceptedTokens"`
		Requests       float64 `json:"numRequestsWithDraftTokens"`
	} `json:"specDecodingStats"`
}

// parseIterationStats sums one /metrics answer's iterations: how many, how
// many drafted, and their draft, accepted and requests-with-drafts counts.
func parseIterationStats(body []byte) (map[string]float64, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("reading TensorRT-LLM's iteration statistics (a JSON array): %w", err)
	}
	out := map[string]float64{trtllmIterations: float64(len(raw))}
	var bad error
	for i, r := range raw {
		var it iterationStats
		if err := decodeIteration(r, &it); err != nil {
			bad = errors.Join(bad, fmt.Errorf("iteration %d of %d: %w", i+1, len(raw), err))
			continue
		}
		if it.Spec == nil || it.Spec.DraftTokens <= 0 {
			continue
		}
		out[trtllmSpecIterations]++
		out[trtllmSpecDraftTokens] += it.Spec.DraftTokens
		out[trtllmSpecAccepted] += it.Spec.AcceptedTokens
		out[trtllmSpecRequests] += it.Spec.Requests
	}
	if bad != nil {
		return out, fmt.Errorf("reading TensorRT-LLM's iteration statistics: %w", bad)
	}
	return out, nil
}

// decodeIteration reads one element: an object, or a string holding one.
func decodeIteration(r json.RawMessage, it *iterationStats) error {
	var s string
	if json.Unmarshal(r, &s) == nil {
		r = json.RawMessage(s)
	}
	return json.Unmarshal(r, it)
}

// trtllmAccept is the level's accept length from the iterations of its
// scrapes. The scrape before the level emptied the queue of what came
// earlier, so the mid-level and after scrapes hold the level's iterations
// (as many as the queue kept: it is bounded, and keeps the latest). A
// level without drafted iterations has none: the scenario does not
// speculate, or the statistics are off.
func trtllmAccept(s Scrapes) (float64, string) {
	if s.After == nil {
		return 0, ""
	}
	var accepted, requests float64
	for _, sc := range []map[string]float64{s.Mid, s.After} {
		accepted += sc[trtllmSpecAccepted]
		requests += sc[trtllmSpecRequests]
	}
	if requests <= 0 {
		return 0, ""
	}
	return 1 + accepted/requests, SourceTRTLLMIterationStats
}
