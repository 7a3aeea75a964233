package measure

import (
	"testing"
	"time"
)

func TestSessionsOf(t *testing.T) {
	ms := int64(time.Millisecond)
	cached := func(n int) *int { return &n }
	rec := func(session string, turn int, send, ttft, end int64, prompt int, hit *int, fail bool) Record {
		r := Record{Session: session, Turn: turn, SendNs: send * ms, FirstNs: (send + ttft) * ms, EndNs: end * ms,
			PromptTokens: prompt, Tokens: 10, CachedTokens: hit}
		if fail {
			r.ErrClass, r.FirstNs = ErrHTTP, 0
		}
		return r
	}
	tests := []struct {
		name string
		recs []Record
		want func(t *testing.T, s *SessionSummary)
	}{
		{"no sessions", []Record{{SendNs: 1, EndNs: 2}}, func(t *testing.T, s *SessionSummary) {
			if s != nil {
				t.Errorf("summary %+v for records of no session", s)
			}
		}},
		{"two sessions", []Record{
			rec("a", 1, 0, 40, 100, 1000, cached(0), false),
			rec("a", 2, 150, 10, 250, 1100, cached(1000), false),
			rec("b", 1, 10, 60, 120, 1000, nil, false),
			rec("b", 2, 200, 0, 210, 1100, nil, true),
		}, func(t *testing.T, s *SessionSummary) {
			if s.Sessions != 2 || s.Completed != 1 || s.TurnsMean != 2 {
				t.Errorf("sessions %d, completed %d, turns %g; want 2, 1, 2", s.Sessions, s.Completed, s.TurnsMean)
			}
			if s.Duration.Max != 0.25 || s.Duration.Min != 0.2 {
				t.Errorf("durations %+v, want 0.2 s and 0.25 s", s.Duration)
			}
			if len(s.ByTurn) != 2 || s.ByTurn[0].Turn != 1 || s.ByTurn[1].Turn != 2 {
				t.Fatalf("by turn %+v", s.ByTurn)
			}
			t1, t2 := s.ByTurn[0], s.ByTurn[1]
			if t1.Requests != 2 || t1.OK != 2 || t1.TTFT.P50 != 0.05 || t1.PromptTokensMean != 1000 {
				t.Errorf("turn 1 %+v", t1)
			}
			if t1.CachedShare == nil || *t1.CachedShare != 0 {
				t.Errorf("turn 1 cached share %v, want 0 (reported by one request)", t1.CachedShare)
			}
			if t2.Requests != 2 || t2.OK != 1 || t2.TTFT.N != 1 || t2.TTFT.P50 != 0.01 || t2.CachedShare == nil || *t2.CachedShare != 1000.0/1100 {
				t.Errorf("turn 2 %+v", t2)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.want(t, SessionsOf(tt.recs)) })
	}
}
