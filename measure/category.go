package measure

import (
	"slices"
	"sort"
)

// CategorySummary condenses the requests of one prompt category at one
// level, over the level's repeats: the figures that show whether a
// configuration's advantage holds for every kind of prompt (speculative
// decoding, for one, is accepted more often on code than on chat).
type CategorySummary struct {
	Category string `json:"category"` // "" for prompts without one, in a set where others have one
	Requests int    `json:"requests"`
	OK       int    `json:"ok"`
	Tokens   int    `json:"tokens"` // completion tokens of successful requests
	// Throughput is the category's completion tokens produced inside the
	// level's throughput window (steady state, else wall time; as
	// LevelThroughput), over the window's length, tok/s, summed over
	// repeats: the category's share of the level's throughput, so the
	// categories add up to it.
	Throughput float64 `json:"throughput_tok_s"`
	// PerRequestTokS is the mean of tokens/latency over the category's
	// successful requests: how fast one of its answers arrives.
	PerRequestTokS float64 `json:"per_request_tok_s"`
	TPOTP50        float64 `json:"tpot_p50_s"`
	// DraftTokens and DraftAccepted sum the per-response draft counts of
	// the successful requests (Record.Draft); both nil when no response
	// reported drafting (an engine that reports acceptance per level only,
	// or none), both set when one did, so that none accepted reads as 0.
	// AcceptLength is made from them (DraftAcceptLength).
	DraftTokens   *int     `json:"draft_n,omitempty"`
	DraftAccepted *int     `json:"draft_n_accepted,omitempty"`
	AcceptLength  *float64 `json:"accept_length,omitempty"`
}

// Categories summarizes each prompt category of one level;
// each element of repeats is one repeat's records, warm-up left out. It
// returns nil when no record has a category, and otherwise one summary per
// category, sorted by name.
func Categories(level Level, repeats ...[]Record) []CategorySummary {
	type acc struct {
		CategorySummary
		perReq, windowTok float64
		tpot              []float64
		drafted, accepted int
		reported          bool // some response reported its draft counts
	}
	byCat := map[string]*acc{}
	var seconds float64
	labelled := false
	for _, recs := range repeats {
		w, _ := throughputWindow(level, recs)
		seconds += max(w.Seconds(), 0)
		for _, r := range recs {
			labelled = labelled || r.Category != ""
			a := byCat[r.Category]
			if a == nil {
				a = &acc{CategorySummary: CategorySummary{Category: r.Category}}
				byCat[r.Category] = a
			}
			a.Requests++
			if !r.OK() {
				continue
			}
			a.OK++
			a.Tokens += r.Tokens
			if d, acc, ok := r.Draft(); ok {
				a.drafted, a.accepted, a.reported = a.drafted+d, a.accepted+acc, true
			}
			if w.End > w.Start {
				a.windowTok += tokensIn(r, w)
			}
			if l := r.Latency().Seconds(); l > 0 {
				a.perReq += float64(r.Tokens) / l
			}
			if r.Tokens >= 2 && r.FirstNs != 0 {
				a.tpot = append(a.tpot, r.TPOT().Seconds())
			}
		}
	}
	if !labelled {
		return nil
	}
	accept := CategoryAcceptance(level, repeats...)
	out := make([]CategorySummary, 0, len(byCat))
	for _, a := range byCat {
		s := a.CategorySummary
		if seconds > 0 {
			s.Throughput = a.windowTok / seconds
		}
		if s.OK > 0 {
			s.PerRequestTokS = a.perReq / float64(s.OK)
		}
		s.TPOTP50 = Percentile(a.tpot, 50)
		if a.reported {
			s.DraftTokens, s.DraftAccepted = new(a.drafted), new(a.accepted)
		}
		if acc, ok := accept[s.Category]; ok {
			s.AcceptLength = new(acc.Length)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Category < out[j].Category })
	return slices.Clip(out)
}
