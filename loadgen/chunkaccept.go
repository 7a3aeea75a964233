package loadgen

import "github.com/bakeoff-dev/bakeoff/measure"

// The speculative counts a response carries of its own, in each engine's
// shape (docs/ENGINES.md names the versions that have them):
//   - SGLang (PR #33518), with "return_spec_tokens_details": true in the
//     request: sglext.spec_tokens_details, streamed as a chunk of its own
//     (choices: []) after the finish chunk;
//   - vLLM (PR #48915), with --per-request-spec-decode-metrics on the
//     server: metrics.speculative_decoding in the final usage chunk;
//   - llama.cpp: timings.draft_n and draft_n_accepted in the final chunk
//     (chunk.go's timings).

// sglext is SGLang's extension object on a response.
type sglext struct {
	SpecTokensDetails *sglangSpecDetails `json:"spec_tokens_details"`
}

// sglangSpecDetails is one request's speculative counts as SGLang sends
// them: its verify steps, the draft tokens proposed and accepted, and how
// many steps accepted each number of drafts.
type sglangSpecDetails struct {
	VerifyCt       *int  `json:"spec_verify_ct"`
	CorrectDrafts  *int  `json:"spec_num_correct_drafts"`
	ProposedDrafts *int  `json:"spec_num_proposed_drafts"`
	Histogram      []int `json:"spec_correct_drafts_histogram"`
}

// respMetrics is vLLM's per-request metrics object.
type respMetrics struct {
	SpeculativeDecoding *vllmSpecMetrics `json:"speculative_decoding"`
}

// vllmSpecMetrics is one request's speculative counts as vLLM sends them.
type vllmSpecMetrics struct {
	SpecSteps      *int  `json:"num_spec_steps"`
	AcceptedTokens *int  `json:"num_accepted_draft_tokens"`
	DraftTokens    *int  `json:"num_draft_tokens"`
	Histogram      []int `json:"acceptance_histogram"`
}

// takeAccept copies the speculative counts a chunk carries into rec. The
// last chunk that carries them wins; a 0 is kept (none accepted, or a
// request of one token that reached no verify step, is an answer).
func takeAccept(c *chunk, rec *measure.Record) {
	if t := c.Timings; t != nil {
		// llama.cpp's final chunk; earlier chunks may carry partial timings.
		if t.DraftN != nil {
			rec.DraftTokens = new(*t.DraftN)
		}
		if t.DraftNAccepted != nil {
			rec.DraftAccepted = new(*t.DraftNAccepted)
		}
	}
	if x := c.Sglext; x != nil && x.SpecTokensDetails != nil {
		d := x.SpecTokensDetails
		setCounts(rec, d.VerifyCt, d.ProposedDrafts, d.CorrectDrafts, d.Histogram)
	}
	if m := c.Metrics; m != nil && m.SpeculativeDecoding != nil {
		d := m.SpeculativeDecoding
		setCounts(rec, d.SpecSteps, d.DraftTokens, d.AcceptedTokens, d.Histogram)
		// num_spec_steps counts the steps that verified drafts only, and
		// vLLM's accept length is 1 + accepted / steps.
		rec.DraftStepsOnly = d.SpecSteps != nil
	}
}

func setCounts(rec *measure.Record, steps, proposed, accepted *int, hist []int) {
	if steps != nil {
		rec.VerifySteps = new(*steps)
	}
	if proposed != nil {
		rec.DraftTokens = new(*proposed)
	}
	if accepted != nil {
		rec.DraftAccepted = new(*accepted)
	}
	if hist != nil {
		rec.AcceptHistogram = append([]int(nil), hist...)
	}
}

// decodeSglext reads SGLang's sglext object into *dst, as encoding/json
// fills a pointer field.
func (s *scanner) decodeSglext(dst **sglext) error {
	if s.null() {
		*dst = nil
		return nil
	}
	if *dst == nil {
		*dst = &sglext{}
	}
	x := *dst
	return s.object(func(key []byte) error {
		if !is(key, "spec_tokens_details") {
			return s.skip()
		}
		if s.null() {
			x.SpecTokensDetails = nil
			return nil
		}
		if x.SpecTokensDetails == nil {
			x.SpecTokensDetails = &sglangSpecDetails{}
		}
		d := x.SpecTokensDetails
		return s.object(func(key []byte) error {
			switch {
			case is(key, "spec_verify_ct"):
				return s.intPtr(&d.VerifyCt)
			case is(key, "spec_num_correct_drafts"):
				return s.intPtr(&d.CorrectDrafts)
			case is(key, "spec_num_proposed_drafts"):
				return s.intPtr(&d.ProposedDrafts)
			case is(key, "spec_correct_drafts_histogram"):
				return s.ints(&d.Histogram)
			}
			return s.skip()
		})
	})
}

// decodeMetrics reads vLLM's metrics object into *dst.
func (s *scanner) decodeMetrics(dst **respMetrics) error {
	if s.null() {
		*dst = nil
		return nil
	}
	if *dst == nil {
		*dst = &respMetrics{}
	}
	m := *dst
	return s.object(func(key []byte) error {
		if !is(key, "speculative_decoding") {
			return s.skip()
		}
		if s.null() {
			m.SpeculativeDecoding = nil
			return nil
		}
		if m.SpeculativeDecoding == nil {
			m.SpeculativeDecoding = &vllmSpecMetrics{}
		}
		d := m.SpeculativeDecoding
		return s.object(func(key []byte) error {
			switch {
			case is(key, "num_spec_steps"):
				return s.intPtr(&d.SpecSteps)
			case is(key, "num_accepted_draft_tokens"):
				return s.intPtr(&d.AcceptedTokens)
			case is(key, "num_draft_tokens"):
				return s.intPtr(&d.DraftTokens)
			case is(key, "acceptance_histogram"):
				return s.ints(&d.Histogram)
			}
			return s.skip()
		})
	})
}

// ints reads an array of integers or null into *dst as encoding/json
// fills a []int: null sets it to nil, an array replaces its elements.
func (s *scanner) ints(dst *[]int) error {
	if s.null() {
		*dst = nil
		return nil
	}
	out := (*dst)[:0]
	if out == nil {
		out = []int{}
	}
	err := s.array(func() error {
		var n int
		if err := s.int(&n); err != nil {
			return err
		}
		out = append(out, n)
		return nil
	})
	*dst = out
	return err
}
