package model

// Per-request speculative statistics, as SGLang reports them: the native
// /generate's meta_info carries spec_verify_ct (PR #3152) and, in builds
// since late 2025, spec_accept_rate and spec_accept_length
// (tokenizer_manager.py, _calculate_spec_decoding_metrics); SGLang PR #33518
// (merged, "feat(api): add sglext_spec") returns them on /v1/completions and
// /v1/chat/completions when the request sets return_spec_tokens_details:
// true, as sglext.spec_tokens_details with the draft counts and a Histogram
// (entrypoints/openai/utils.py, spec_tokens_details_from_meta_info). Its
// identities, which the sim's figures keep exactly:
//
//	spec_accept_length = completion_tokens / spec_verify_ct
//	spec_num_proposed_drafts = spec_verify_ct × (speculative_num_draft_tokens − 1)
//	spec_accept_rate = spec_num_correct_drafts / spec_num_proposed_drafts
//	sum(spec_correct_drafts_histogram) = spec_verify_ct
//	sum(i × Histogram[i]) = spec_num_correct_drafts
//
// Server-wide, sglang:spec_verify_calls_total (PR #25689) adds each finished
// request's spec_verify_ct, so that over a window the increase of
// sglang:generation_tokens_total over its increase is the token-weighted
// accept length of the requests in it.

// SpecCounts are one request's speculative counts: its verify steps (the
// decode steps it took part in), the draft tokens those steps accepted, and
// how many steps accepted each number of drafts.
type SpecCounts struct {
	VerifySteps   int
	CorrectDrafts int
	// Histogram[i] is the number of verify steps that accepted i draft
	// tokens; its length is steps+1 (0 to steps accepted). Nil without
	// speculation.
	Histogram []int
}

// step counts one verify step that gave the request tokens tokens: the
// target's own token (the bonus) and tokens−1 accepted drafts. A request cut
// short by max_tokens counts the drafts it kept, so that completion tokens
// stay 1 (the prefill's) + verify steps + correct drafts.
func (s *SpecCounts) step(tokens, maxAccepted int) {
	s.VerifySteps++
	if maxAccepted <= 0 {
		return
	}
	if s.Histogram == nil {
		s.Histogram = make([]int, maxAccepted+1)
	}
	a := min(tokens-1, maxAccepted)
	s.CorrectDrafts += a
	s.Histogram[a]++
}

// Details is SGLang's per-request speculative meta_info, and the body of
// sglext.spec_tokens_details, for a request of completion tokens on a
// server verifying draftTokens tokens per request and step. A request that
// never reached a verify step (one token) reports zeros, as SGLang does.
func (s SpecCounts) Details(completion, draftTokens int) map[string]any {
	proposed := s.VerifySteps * max(0, draftTokens-1)
	d := map[string]any{
		"spec_verify_ct":                s.VerifySteps,
		"spec_num_correct_drafts":       s.CorrectDrafts,
		"spec_num_proposed_drafts":      proposed,
		"spec_accept_length":            0.0,
		"spec_accept_rate":              0.0,
		"spec_correct_drafts_histogram": append([]int{}, s.Histogram...),
	}
	if s.VerifySteps > 0 {
		d["spec_accept_length"] = float64(completion) / float64(s.VerifySteps)
	}
	if proposed > 0 {
		d["spec_accept_rate"] = float64(s.CorrectDrafts) / float64(proposed)
	}
	return d
}
