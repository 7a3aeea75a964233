package measure

// Steps returns the target-model steps that produced the request's tokens,
// and ok false when its response reported no speculative counts. A verify
// count the server gave (SGLang's spec_verify_ct, vLLM's num_spec_steps) is
// taken as it is; from draft counts alone (llama.cpp's timings) every step
// yields one token of its own plus the drafts it accepted, so steps =
// tokens − accepted. Which engines' responses carry the counts is the engine
// profile's to say (engine.Profile.ResponseAccept).
func (r Record) Steps() (steps int, ok bool) {
	if r.VerifySteps != nil {
		return *r.VerifySteps, true
	}
	if _, acc, ok := r.Draft(); ok && acc >= 0 && acc < r.Tokens {
		return r.Tokens - acc, true
	}
	return 0, false
}

// DraftAcceptLength is the mean accept length of speculative decoding from
// draft counts summed over requests (Record.Draft): every target-model step
// yields one token of its own plus the drafts it accepted, so steps =
// tokens − accepted and tokens per step = tokens / steps (counting the
// bonus token, as SGLang's and vLLM's figures do). ok is false when nothing
// was drafted.
func DraftAcceptLength(tokens, drafted, accepted int) (length float64, ok bool) {
	if drafted <= 0 || accepted < 0 || accepted >= tokens {
		return 0, false
	}
	return float64(tokens) / float64(tokens-accepted), true
}

// StepTokens are the tokens the request's counted steps (Steps) produced:
// every token of the request, except where the response counts only the
// steps that verified drafts (DraftStepsOnly, vLLM), whose steps produced
// one token each plus the drafts they accepted. Over Steps, it is the
// accept length as the engine defines it: SGLang's completion tokens /
// spec_verify_ct, vLLM's 1 + num_accepted_draft_tokens / num_spec_steps.
func (r Record) StepTokens() int {
	if r.DraftStepsOnly && r.VerifySteps != nil {
		_, acc, _ := r.Draft()
		return *r.VerifySteps + acc
	}
	return r.Tokens
}

// RecordsAcceptLength is the token-weighted accept length of the successful
// measured records of recs that reported their counts: Σ step tokens / Σ
// steps (Record.StepTokens, Record.Steps), every request whole. ok is false when none reported, or
// when nothing was speculated (no verify step reported and no draft
// proposed). LevelAcceptance is the level's figure, over its window.
func RecordsAcceptLength(recs []Record) (length float64, ok bool) {
	var tokens, steps, drafted int
	verified := false
	for _, r := range recs {
		if r.Warmup || !r.OK() {
			continue
		}
		s, ok := r.Steps()
		if !ok {
			continue
		}
		tokens, steps = tokens+r.StepTokens(), steps+s
		if d, _, ok := r.Draft(); ok {
			drafted += d
		}
		verified = verified || r.VerifySteps != nil
	}
	if steps <= 0 || (!verified && drafted <= 0) {
		return 0, false
	}
	return float64(tokens) / float64(steps), true
}
