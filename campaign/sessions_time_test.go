package campaign

import (
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// TestSessionTime: the think times a level cannot avoid, spent side by
// side by a closed loop's users, and an open loop's session arrivals.
func TestSessionTime(t *testing.T) {
	sessions := &prompts.SessionSpec{Turns: prompts.Dist{Kind: prompts.DistFixed, Value: 4},
		Think: prompts.Dist{Kind: prompts.DistFixed, Value: 2000}}
	for _, tt := range []struct {
		name     string
		sessions *prompts.SessionSpec
		requests int
		level    measure.Level
		want     time.Duration
	}{
		{"no sessions", nil, 40, measure.ConcurrencyLevel(2), 0},
		// 10 sessions of 4 turns: 30 follow-ups of 2 s over 2 users.
		{"closed loop", sessions, 40, measure.ConcurrencyLevel(2), 30 * time.Second},
		{"closed loop, one user each", sessions, 40, measure.ConcurrencyLevel(10), 6 * time.Second},
		// 10 sessions at 0.5/s: 18 s of arrivals, then the last one's 3 thinks.
		{"open loop", sessions, 40, measure.RateLevel(0.5), 24 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := Sweep{Sessions: tt.sessions, Requests: tt.requests}
			if got := s.SessionTime(tt.level); got != tt.want {
				t.Errorf("%s: %s, want %s", tt.level, got, tt.want)
			}
		})
	}
}
