package measure

// DraftAcceptLength is the mean accept length of speculative decoding from
// per-response draft counts summed over requests (Record.Draft): every
// target-model step yields one token of its own plus the drafts it
// accepted, so steps = tokens − accepted and tokens per step = tokens /
// steps (counting the bonus token, as SGLang's and vLLM's figures do).
// ok is false when nothing was drafted. Which engines' responses carry the
// counts is the engine profile's to say (engine.Profile.ResponseAccept).
func DraftAcceptLength(tokens, drafted, accepted int) (length float64, ok bool) {
	if drafted <= 0 || accepted < 0 || accepted >= tokens {
		return 0, false
	}
	return float64(tokens) / float64(tokens-accepted), true
}

// RecordsAcceptLength is DraftAcceptLength over the successful measured
// records of recs.
func RecordsAcceptLength(recs []Record) (length float64, ok bool) {
	var tokens, drafted, accepted int
	for _, r := range recs {
		if r.Warmup || !r.OK() {
			continue
		}
		tokens += r.Tokens
		if d, acc, ok := r.Draft(); ok {
			drafted, accepted = drafted+d, accepted+acc
		}
	}
	return DraftAcceptLength(tokens, drafted, accepted)
}
