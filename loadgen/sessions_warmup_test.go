package loadgen

import (
	"strings"
	"testing"
)

// TestSessionWarmup: the warm-up of a sessions sweep runs sessions of its
// own, whose later turns resend their history as any level's do, and
// which are other conversations than the measured ones; none of it is
// measured.
func TestSessionWarmup(t *testing.T) {
	srv := newSessionServer(t, "w", 0)
	recs := runSessions(t, srv, Options{Endpoint: EndpointChat, Concurrency: []int{2}, Requests: 6, Warmup: 3, Seed: 4,
		Sessions: sessionSpec(t, "turns=2 think_ms=1 first=uniform(min=20,max=40) follow_up=10")})
	firsts := map[string]bool{}
	warm, measured := 0, 0
	for id, turns := range recs {
		for turn, r := range turns {
			if r.Warmup != strings.HasPrefix(id, "w-s") {
				t.Errorf("%s turn %d: warm-up %v", id, turn, r.Warmup)
			}
			if r.Warmup {
				warm++
			} else {
				measured++
			}
		}
		if turns[1].Warmup {
			if _, ok := turns[2]; !ok {
				t.Errorf("warm-up session %s has no second turn", id)
			}
		} else {
			firsts[firstMessage(t, srv, id)] = true
		}
	}
	if warm < 3 || measured < 6 {
		t.Fatalf("%d warm-up and %d measured requests, want at least 3 and 6", warm, measured)
	}
	for id, turns := range recs {
		if turns[1].Warmup && firsts[firstMessage(t, srv, id)] {
			t.Errorf("warm-up session %s sent a measured session's first message", id)
		}
	}
}

// firstMessage is the first user message of the request session id sent
// first, from the server's log.
func firstMessage(t *testing.T, srv *sessionServer, id string) string {
	t.Helper()
	log, _ := srv.requests()
	for _, l := range log {
		if l.header == id && len(l.req.Messages) > 0 {
			return l.req.Messages[0].Content
		}
	}
	t.Fatalf("no request of session %s", id)
	return ""
}
