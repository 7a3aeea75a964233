package measure

import (
	"fmt"
	"strings"
	"testing"
)

// TestSaturationOfSessions: an open loop of sessions is judged by its
// sessions. Each turn after the first is sent when the answer before it
// ends, so the sends of turns keep pace with a slow server; the sessions'
// spans do not, and show the queue.
func TestSaturationOfSessions(t *testing.T) {
	const gap, turns, n = int64(10e6), 3, 40 // sessions every 10 ms
	level := func(turnNs func(k int) int64) []Record {
		var recs []Record
		for k := range n {
			at := int64(k) * gap
			for turn := 1; turn <= turns; turn++ {
				end := at + turnNs(k)
				recs = append(recs, Record{Level: RateLevel(100), Session: fmt.Sprintf("s%d", k), Turn: turn, SendNs: at, EndNs: end})
				at = end + 1e6 // a think time of 1 ms
			}
		}
		return recs
	}
	for _, tt := range []struct {
		name      string
		turnNs    func(k int) int64
		saturated bool
	}{
		{"keeps up", func(int) int64 { return 5e6 }, false},
		// A queue: session k's turns each wait for the k sessions before.
		{"falls behind", func(k int) int64 { return 5e6 + int64(k)*4e6 }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := SaturationOf(level(tt.turnNs))
			if s.Saturated != tt.saturated || !strings.Contains(s.Reason, "sessions") {
				t.Errorf("saturated %v (%s), want %v, judged by sessions", s.Saturated, s.Reason, tt.saturated)
			}
		})
	}
	if s := SaturationOf(level(func(int) int64 { return 5e6 })[:turns*5]); s.Judged {
		t.Errorf("5 sessions judged: %s", s.Reason)
	}
}
