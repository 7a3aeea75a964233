package measure

// Acceptance is the speculative acceptance of one level repeat, or of
// several pooled, or of one prompt category of them, from the requests' own
// counts (Record.Steps, Draft, AcceptHistogram).
type Acceptance struct {
	// Length is the token-weighted accept length, Tokens / Steps: the
	// tokens the counted target steps produced over those steps, counting
	// the bonus token (1 to drafts + 1); Tokens are the completion tokens,
	// except for responses that count only the steps that verified drafts
	// (Record.StepTokens: vLLM, whose figure is 1 + accepted / steps). A request counts by the share of
	// its tokens produced inside the level's throughput window (the steady
	// state, as LevelThroughput: TokensIn), its steps and drafts in the
	// same share, so the figure is over the same stretch of time as the
	// throughput and a request that ran in the ramp or the drain weighs
	// only for what it did inside.
	Length float64 `json:"length"`
	Tokens float64 `json:"tokens"`
	Steps  float64 `json:"steps"`
	// Requests counts the requests that reported their counts and produced
	// tokens inside the window.
	Requests int `json:"requests"`
	// AcceptRate is the accepted drafts over the proposed ones, with the
	// same weights; 0 when the responses proposed none.
	AcceptRate float64 `json:"accept_rate,omitempty"`
	// StepShares[j] is the share of verify steps that accepted exactly j
	// drafts, from the responses' histograms (nil when none gave one).
	// PositionRates[k-1] is the share of verify steps whose k-th draft was
	// accepted: a draft is accepted only after every draft before it, so
	// it is the share that accepted k or more.
	StepShares    []float64 `json:"step_shares,omitempty"`
	PositionRates []float64 `json:"position_rates,omitempty"`
}

// acceptAcc adds requests' counts, each by a weight.
type acceptAcc struct {
	tokens, steps, proposed, accepted float64
	hist                              []float64
	requests                          int
	verified                          bool // a response gave its verify steps
}

// add counts r by the share of its tokens produced inside w.
func (a *acceptAcc) add(r Record, w Window) {
	steps, ok := r.Steps()
	if !ok || !r.OK() || r.Warmup || r.Tokens <= 0 {
		return
	}
	f := tokensIn(r, w) / float64(r.Tokens)
	if f <= 0 {
		return
	}
	a.requests++
	a.tokens += f * float64(r.StepTokens())
	a.steps += f * float64(steps)
	a.verified = a.verified || r.VerifySteps != nil
	if d, acc, ok := r.Draft(); ok {
		a.proposed += f * float64(d)
		a.accepted += f * float64(acc)
	}
	for j, n := range r.AcceptHistogram {
		if j >= len(a.hist) {
			a.hist = append(a.hist, make([]float64, j+1-len(a.hist))...)
		}
		a.hist[j] += f * float64(n)
	}
}

// result is the acceptance of what was added; ok is false when nothing
// was speculated (no verify step reported and no draft proposed).
func (a *acceptAcc) result() (Acceptance, bool) {
	if a.steps <= 0 || (!a.verified && a.proposed <= 0) {
		return Acceptance{}, false
	}
	out := Acceptance{Length: a.tokens / a.steps, Tokens: a.tokens, Steps: a.steps, Requests: a.requests}
	if a.proposed > 0 {
		out.AcceptRate = a.accepted / a.proposed
	}
	var total float64
	for _, n := range a.hist {
		total += n
	}
	if total > 0 {
		out.StepShares = make([]float64, len(a.hist))
		out.PositionRates = make([]float64, len(a.hist)-1)
		above := 0.0 // steps that accepted j or more
		for j := len(a.hist) - 1; j >= 0; j-- {
			out.StepShares[j] = a.hist[j] / total
			above += a.hist[j]
			if j > 0 {
				out.PositionRates[j-1] = above / total
			}
		}
	}
	return out, true
}

// LevelAcceptance is the acceptance of one level from the requests' own
// counts, over each repeat's throughput window, the repeats pooled (each
// element of repeats one repeat's records). ok is false when no response
// reported speculative counts.
func LevelAcceptance(level Level, repeats ...[]Record) (Acceptance, bool) {
	var a acceptAcc
	for _, recs := range repeats {
		w, _ := throughputWindow(level, recs)
		for _, r := range recs {
			a.add(r, w)
		}
	}
	return a.result()
}

// CategoryAcceptance is LevelAcceptance per prompt category, over the
// level's windows: nil when no record has a category or none reported
// counts.
func CategoryAcceptance(level Level, repeats ...[]Record) map[string]Acceptance {
	byCat := map[string]*acceptAcc{}
	labelled := false
	for _, recs := range repeats {
		w, _ := throughputWindow(level, recs)
		for _, r := range recs {
			labelled = labelled || r.Category != ""
			a := byCat[r.Category]
			if a == nil {
				a = &acceptAcc{}
				byCat[r.Category] = a
			}
			a.add(r, w)
		}
	}
	if !labelled {
		return nil
	}
	var out map[string]Acceptance
	for c, a := range byCat {
		if acc, ok := a.result(); ok {
			if out == nil {
				out = map[string]Acceptance{}
			}
			out[c] = acc
		}
	}
	return out
}
