package measure

import (
	"cmp"
	"slices"
)

// SessionSummary condenses the multi-turn sessions of one level, over its
// repeats: how long the conversations ran, and the figures of each turn
// index, where a prefix cache shows (every turn resends the history, so a
// server that keeps it computes only the new message).
type SessionSummary struct {
	Sessions int `json:"sessions"` // sessions with at least one measured request
	// Completed counts the sessions none of whose requests failed (a
	// session stops at its first failed turn: it has no answer to resend).
	Completed int `json:"completed"`
	// TurnsMean is the mean number of turns sent per session.
	TurnsMean float64 `json:"turns_mean"`
	// Duration is the distribution of a session's length, first send to
	// last end, think times included, seconds.
	Duration Dist `json:"duration_s"`
	// ByTurn holds the figures of each turn index, in order.
	ByTurn []TurnSummary `json:"by_turn"`
}

// TurnSummary is the figures of one turn index over a level's sessions.
type TurnSummary struct {
	Turn     int `json:"turn"` // from 1
	Requests int `json:"requests"`
	OK       int `json:"ok"`
	// TTFT is the distribution of time to first token over the successful
	// requests with a first chunk, seconds.
	TTFT Dist `json:"ttft_s"`
	// PromptTokensMean is the mean prompt length of the successful
	// requests, which grows turn by turn with the history.
	PromptTokensMean float64 `json:"prompt_tokens_mean"`
	// CachedShare is the share of those prompt tokens the server reported
	// served from its prefix cache (Record.CachedTokens); nil when no
	// request of the turn reported it.
	CachedShare *float64 `json:"cached_share,omitempty"`
}

// SessionsOf summarizes the sessions of one level; each element of repeats
// is one repeat's records, warm-up left out. It returns nil when no record
// belongs to a session.
func SessionsOf(repeats ...[]Record) *SessionSummary {
	type span struct {
		first, last int64
		turns       int
		failed      bool
	}
	type turnAcc struct {
		TurnSummary
		ttft                   []float64
		prompt, cached, report int
	}
	type sessionKey struct {
		repeat int
		id     string
	}
	sessions := map[sessionKey]*span{}
	turns := map[int]*turnAcc{}
	for rep, recs := range repeats {
		for _, r := range recs {
			if r.Session == "" || r.Warmup {
				continue
			}
			key := sessionKey{rep, r.Session}
			s := sessions[key]
			if s == nil {
				s = &span{first: r.SendNs, last: r.EndNs}
				sessions[key] = s
			}
			s.first, s.last = min(s.first, r.SendNs), max(s.last, r.EndNs)
			s.turns++
			s.failed = s.failed || !r.OK()
			t := turns[r.Turn]
			if t == nil {
				t = &turnAcc{TurnSummary: TurnSummary{Turn: r.Turn}}
				turns[r.Turn] = t
			}
			t.Requests++
			if !r.OK() {
				continue
			}
			t.OK++
			if r.FirstNs != 0 {
				t.ttft = append(t.ttft, r.TTFT().Seconds())
			}
			t.prompt += r.PromptTokens
			if r.CachedTokens != nil {
				t.cached += *r.CachedTokens
				t.report++
			}
		}
	}
	if len(sessions) == 0 {
		return nil
	}
	out := &SessionSummary{Sessions: len(sessions)}
	var dur []float64
	total := 0
	for _, s := range sessions {
		total += s.turns
		if !s.failed {
			out.Completed++
		}
		dur = append(dur, float64(s.last-s.first)/1e9)
	}
	out.TurnsMean = float64(total) / float64(len(sessions))
	out.Duration = DistOf(dur)
	for _, t := range turns {
		s := t.TurnSummary
		s.TTFT = DistOf(t.ttft)
		if s.OK > 0 {
			s.PromptTokensMean = float64(t.prompt) / float64(s.OK)
		}
		if t.report > 0 && t.prompt > 0 {
			s.CachedShare = new(float64(t.cached) / float64(t.prompt))
		}
		out.ByTurn = append(out.ByTurn, s)
	}
	slices.SortFunc(out.ByTurn, func(a, b TurnSummary) int { return cmp.Compare(a.Turn, b.Turn) })
	return out
}

// thinking reports whether any of recs was sent after a think time: its
// users then spend part of the level between requests, and an achieved
// concurrency below the number of users is their pause, not the client's
// limit.
func thinking(recs []Record) bool {
	return slices.ContainsFunc(recs, func(r Record) bool { return r.ThinkNs > 0 })
}
