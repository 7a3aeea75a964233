package loadgen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// logged is one request a sessionServer received and what it answered.
type logged struct {
	header, body string
	req          struct {
		Messages []prompts.Message `json:"messages"`
		Prompt   *string           `json:"prompt"`
	}
	answer string
}

// sessionServer streams an answer of its own to every request, in several
// chunks, made of the bytes a history must carry unchanged (leading space,
// quotes, backslashes, a newline, non-ASCII) and salted, so that two
// servers answer differently; it logs every request with its answer.
type sessionServer struct {
	*httptest.Server
	mu   sync.Mutex
	log  []logged
	salt string
	gap  time.Duration
}

func newSessionServer(t *testing.T, salt string, gap time.Duration) *sessionServer {
	s := &sessionServer{salt: salt, gap: gap}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[{"id":"m"}]}`) })
	serve := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var l logged
		l.header, l.body = r.Header.Get("X-Session-ID"), string(body)
		if err := json.Unmarshal(body, &l.req); err != nil {
			t.Errorf("bad request: %v", err)
		}
		sum := sha256.Sum256(body)
		parts := []string{" Réponse", fmt.Sprintf(" «%s» \"%s\"", s.salt, hex.EncodeToString(sum[:3])), "\n\t\\ ok", "."}
		l.answer = strings.Join(parts, "")
		s.mu.Lock()
		s.log = append(s.log, l)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range parts {
			time.Sleep(s.gap)
			c := map[string]any{"choices": []any{map[string]any{"delta": map[string]any{"content": p}}}}
			if l.req.Prompt != nil {
				c = map[string]any{"choices": []any{map[string]any{"text": p}}}
			}
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", len(body)/4, len(parts))
	}
	mux.HandleFunc("/v1/chat/completions", serve)
	mux.HandleFunc("/v1/completions", serve)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// requests returns the log, and the answer the server sent to each body.
func (s *sessionServer) requests() ([]logged, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	answers := map[string]string{}
	for _, l := range s.log {
		answers[l.body] = l.answer
	}
	return append([]logged(nil), s.log...), answers
}

func sessionSpec(t *testing.T, text string) *prompts.SessionSpec {
	t.Helper()
	sp, err := prompts.ParseSessions(text)
	if err != nil {
		t.Fatal(err)
	}
	return &sp
}

// runSessions runs opt against srv and returns its records by session and
// turn.
func runSessions(t *testing.T, srv *sessionServer, opt Options) map[string]map[int]measure.Record {
	t.Helper()
	set, err := prompts.Load(prompts.Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	opt.URL, opt.Model, opt.Prompts = srv.URL, "m", set
	out := map[string]map[int]measure.Record{}
	opt.Records = func(r measure.Record) error {
		if out[r.Session] == nil {
			out[r.Session] = map[int]measure.Record{}
		}
		if _, dup := out[r.Session][r.Turn]; dup {
			t.Errorf("session %q turn %d recorded twice", r.Session, r.Turn)
		}
		out[r.Session][r.Turn] = r
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Levels {
		if l.Failed > 0 || l.Sessions == nil {
			t.Fatalf("%s: %d failed, sessions %+v", l.Level, l.Failed, l.Sessions)
		}
	}
	return out
}

// TestSessionHistory: every turn after the first sends the previous turn's
// request, the answer the server streamed to it byte for byte, and one new
// user message, with the session's header; the records name session and
// turn and hash the same answer; for the chat and the completions endpoint.
func TestSessionHistory(t *testing.T) {
	for _, endpoint := range []string{EndpointChat, EndpointCompletions} {
		t.Run(endpoint, func(t *testing.T) {
			srv := newSessionServer(t, "a", 0)
			recs := runSessions(t, srv, Options{Endpoint: endpoint, Concurrency: []int{2}, Requests: 7, Seed: 5,
				Sessions: sessionSpec(t, "turns=uniform(min=2,max=4) think_ms=uniform(min=1,max=20)")})
			log, answers := srv.requests()
			bySession := map[string]map[int]logged{}
			for _, l := range log {
				if l.header == "" {
					t.Fatalf("a request without X-Session-ID: %.80s", l.body)
				}
				for turn, r := range recs[l.header] {
					if ans, ok := answers[l.body]; ok && r.OutputHash == "sha256:"+hexSum(ans) && turnOf(l, endpoint) == turn {
						if bySession[l.header] == nil {
							bySession[l.header] = map[int]logged{}
						}
						bySession[l.header][turn] = l
					}
				}
			}
			turns := 0
			for id, rs := range recs {
				for turn, r := range rs {
					turns++
					l, ok := bySession[id][turn]
					if !ok {
						t.Fatalf("%s turn %d: the server logged no request whose answer the record hashes", id, turn)
					}
					if r.Turn != turn || r.Session != id {
						t.Errorf("record %+v under %s turn %d", r, id, turn)
					}
					if turn == 1 {
						continue
					}
					prev := bySession[id][turn-1]
					if endpoint == EndpointChat {
						m := l.req.Messages
						n := len(prev.req.Messages)
						if len(m) != n+2 || !equalMessages(m[:n], prev.req.Messages) || m[n] != (prompts.Message{Role: "assistant", Content: prev.answer}) || m[n+1].Role != "user" {
							t.Errorf("%s turn %d does not carry turn %d and its answer %q:\n%+v", id, turn, turn-1, prev.answer, m)
						}
						continue
					}
					want := *prev.req.Prompt + prev.answer + "\n\n" + TurnUser
					if !strings.HasPrefix(*l.req.Prompt, want) || !strings.HasSuffix(*l.req.Prompt, TurnAssistant) {
						t.Errorf("%s turn %d: prompt %q does not continue %q", id, turn, *l.req.Prompt, want)
					}
				}
			}
			if turns < 7 || turns != len(log) {
				t.Errorf("%d turns recorded, %d requests logged; want at least 7, the same", turns, len(log))
			}
		})
	}
}

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// turnOf is the turn a logged request is, from its history.
func turnOf(l logged, endpoint string) int {
	if endpoint == EndpointChat {
		n := 0
		for _, m := range l.req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		return n + 1
	}
	return strings.Count(*l.req.Prompt, TurnAssistant)
}

func equalMessages(a, b []prompts.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// schedule is what a session sweep sends of its own: each turn's user
// message and the think time before it, by session and turn, with the
// first message's sequence number.
func schedule(t *testing.T, srv *sessionServer, recs map[string]map[int]measure.Record, endpoint string) map[string]string {
	t.Helper()
	log, _ := srv.requests()
	out := map[string]string{}
	for _, l := range log {
		turn := turnOf(l, endpoint)
		r, ok := recs[l.header][turn]
		if !ok {
			t.Fatalf("no record of %s turn %d", l.header, turn)
		}
		var msg string
		if endpoint == EndpointChat {
			msg = l.req.Messages[len(l.req.Messages)-1].Content
		} else {
			p := *l.req.Prompt
			p = strings.TrimSuffix(p, TurnAssistant)
			msg = p[strings.LastIndex(p, TurnUser)+len(TurnUser):]
		}
		out[fmt.Sprintf("%s/%d", l.header, turn)] = fmt.Sprintf("seq %d, think %d ns, max_tokens %d: %q", r.Seq, r.ThinkNs, r.MaxTokens, msg)
	}
	return out
}

// TestSessionsIdentical: two servers that answer differently, at different
// speeds, receive the same sessions (each turn's user message) on the same
// schedule (think times), as two scenarios of a campaign do; a second run of
// the same seed sends byte-identical requests; and another seed other
// sessions. In a closed loop of users and an open loop of arrivals.
func TestSessionsIdentical(t *testing.T) {
	spec := "turns=uniform(min=1,max=4) think_ms=normal(mean=10,sd=5,min=1,max=30) first=prompts follow_up=uniform(min=5,max=40)"
	for _, tc := range []struct {
		name     string
		endpoint string
		opt      Options
	}{
		{"closed", EndpointChat, Options{Concurrency: []int{3}, Requests: 10}},
		{"open", EndpointCompletions, Options{Rates: []float64{40}, Requests: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(salt string, gap time.Duration, seed int64) (*sessionServer, map[string]string) {
				srv := newSessionServer(t, salt, gap)
				opt := tc.opt
				opt.Endpoint, opt.Seed, opt.Sessions = tc.endpoint, seed, sessionSpec(t, spec)
				recs := runSessions(t, srv, opt)
				for id, rs := range recs {
					for turn, r := range rs {
						if prev, ok := rs[turn-1]; ok && r.SendNs < prev.EndNs+r.ThinkNs {
							t.Errorf("%s turn %d sent %v after the previous answer, before its think time %v",
								id, turn, time.Duration(r.SendNs-prev.EndNs), time.Duration(r.ThinkNs))
						}
					}
				}
				return srv, schedule(t, srv, recs, tc.endpoint)
			}
			a, schedA := run("fast", 0, 9)
			_, schedB := run("slow-and-different", 3*time.Millisecond, 9)
			if fmt.Sprint(schedA) != fmt.Sprint(schedB) {
				t.Errorf("two servers received different sessions:\n%v\n%v", schedA, schedB)
			}
			a2, _ := run("fast", 0, 9)
			if bodies(a) != bodies(a2) {
				t.Error("two runs of one seed sent different requests")
			}
			_, schedC := run("fast", 0, 10)
			if fmt.Sprint(schedA) == fmt.Sprint(schedC) {
				t.Error("another seed sent the same sessions")
			}
		})
	}
}

// bodies is every request body the server received, in a fixed order.
func bodies(s *sessionServer) string {
	log, _ := s.requests()
	var b []string
	for _, l := range log {
		b = append(b, l.header+"\x00"+l.body)
	}
	slices.Sort(b)
	return strings.Join(b, "\x01")
}
