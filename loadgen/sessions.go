package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// SessionHeaders are the headers every turn of a session carries, with the
// session's id as their value, so that a router in front of several
// servers can send a conversation's turns to the one that holds its
// history in cache: X-Session-ID, as vLLM's benchmark sends it, and
// X-SMG-Routing-Key, the header SGLang's model gateway reads a routing key
// from by default. A single server ignores both.
var SessionHeaders = []string{"X-Session-ID", "X-SMG-Routing-Key"}

// The completions endpoint has no messages, so a session's history is one
// text: turn 1 sends TurnUser + the first message + TurnAssistant, and every
// later turn sends the previous turn's prompt, its answer exactly as
// streamed, then TurnUser + the new message + TurnAssistant. Each prompt
// thus begins with the previous prompt and answer byte for byte, as a
// prefix cache needs.
const (
	TurnUser      = "User: "
	TurnAssistant = "\n\nAssistant:"
	turnSeparator = "\n\n"
)

// SessionID names session k of a level's repeat: the same in every scenario
// and run, different for every session of a sweep.
func SessionID(level measure.Level, repeat, k int) string {
	return fmt.Sprintf("c%d-r%d-s%d", level.Key(), repeat, k)
}

// conversation is one session's history as the next turn sends it.
type conversation struct {
	msgs []prompts.Message // chat
	text strings.Builder   // completions
}

// start begins the conversation with the session's first message, led by
// prefix (the unique-prompt prefix, or "").
func (c *conversation) start(sess prompts.Session, prefix string) {
	c.msgs = slices.Clone(sess.First)
	if prefix != "" && len(c.msgs) > 0 {
		c.msgs[0].Content = prefix + c.msgs[0].Content
	}
	c.text.WriteString(TurnUser + prefix + sess.FirstText + TurnAssistant)
}

// next adds the answer to the last turn and the user's next message.
func (c *conversation) next(answer, msg string) {
	c.msgs = append(c.msgs, prompts.Message{Role: "assistant", Content: answer}, prompts.Message{Role: "user", Content: msg})
	c.text.WriteString(answer + turnSeparator + TurnUser + msg + TurnAssistant)
}

// body is the request of the conversation's next turn.
func (s *sweep) turnBody(c *conversation, maxTokens int) []byte {
	b := requestBody{Model: s.res.Model, MaxTokens: maxTokens, Temperature: s.o.Temperature,
		Stream: true, StreamOptions: map[string]bool{"include_usage": true}, IgnoreEOS: s.o.IgnoreEOS}
	if s.o.Endpoint == EndpointCompletions {
		text := c.text.String()
		b.Prompt = &text
	} else {
		b.Messages = c.msgs
	}
	data, err := json.Marshal(b)
	if err != nil {
		panic(err) // strings and numbers only: cannot fail
	}
	return data
}

// sessionPlan is a level's sessions, drawn, with the sequence number of
// each one's first turn.
type sessionPlan struct {
	sessions []prompts.Session
	seq0     []int
}

// warmupSessions is where the warm-up's sessions are drawn from: session k
// is a function of the seed and k alone, so sessions this far on are other
// conversations than any level's, and a server whose prefix cache cannot be
// cleared is not handed the first measured sessions' history.
const warmupSessions = 1 << 30

// planSessions draws the fewest sessions whose turns make n requests: a
// level's from session 0, the warm-up's from warmupSessions.
func (s *sweep) planSessions(n int, warmup bool) sessionPlan {
	first := 0
	if warmup {
		first = warmupSessions
	}
	var p sessionPlan
	seq := 0
	for k := first; seq < n; k++ {
		sess := s.sessions.Session(k)
		p.sessions = append(p.sessions, sess)
		p.seq0 = append(p.seq0, seq)
		seq += sess.Turns()
	}
	return p
}

// turns is the plan's number of requests.
func (p sessionPlan) turns() int {
	if len(p.sessions) == 0 {
		return 0
	}
	return p.seq0[len(p.seq0)-1] + p.sessions[len(p.sessions)-1].Turns()
}

// sessionLevel runs a level of sessions: l.level.Concurrency users, each
// holding one conversation at a time and starting the next the moment its
// last ends (a closed loop), or sessions arriving at l.level.Rate per second
// on the seeded schedule, however many are still running (an open loop).
// The level runs the fewest sessions whose turns make l.n requests.
func (s *sweep) sessionLevel(ctx context.Context, stop context.CancelFunc, l levelSpec) []measure.Record {
	plan := s.planSessions(l.n, l.warmup)
	l.n = plan.turns()
	if measure.IsRate(l.level) {
		return s.openSessions(ctx, stop, l, plan)
	}
	var (
		next  int // next session to start; guarded by s.mu
		start = nowNs()
		t     = newTally(l, start)
		wg    sync.WaitGroup
	)
	worker := func() {
		defer wg.Done()
		freed := start
		for {
			s.mu.Lock()
			k := next
			if k >= len(plan.sessions) || ctx.Err() != nil {
				s.mu.Unlock()
				return
			}
			next++
			s.mu.Unlock()
			freed = s.runSession(ctx, stop, t, &wg, plan.sessions[k], plan.seq0[k], freed, false)
		}
	}
	wg.Add(l.level.Concurrency)
	for range l.level.Concurrency {
		go worker()
	}
	wg.Wait()
	return t.recs
}

// openSessions starts session k at start + its due time from Arrivals,
// however many are still running, up to the in-flight cap (which counts
// sessions: each holds at most one request in flight).
func (s *sweep) openSessions(ctx context.Context, stop context.CancelFunc, l levelSpec, plan sessionPlan) []measure.Record {
	var (
		wg    sync.WaitGroup
		slots = make(chan struct{}, s.o.MaxInFlight)
	)
	due := Arrivals(len(plan.sessions), l.level.Rate, s.o.Burstiness, s.o.Seed, l.level, l.repeat)
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	start := nowNs()
	t := newTally(l, start)
	for k, sess := range plan.sessions {
		at := start + int64(due[k])
		capped, ok := arrive(ctx, timer, at, slots)
		if !ok {
			break
		}
		ready := at
		if capped {
			ready = -at // runSession marks the first turn Capped
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			s.runSession(ctx, stop, t, &wg, sess, plan.seq0[k], ready, true)
		}()
	}
	wg.Wait()
	return t.recs
}

// runSession sends the session's turns in order, each due its think time
// after the previous answer ended, the first due at ready (Unix ns; negated
// when an open loop's cap held it back). A failed turn ends the session: it
// has no answer to send back. It returns when the session's last request
// ended, the moment its user is free.
func (s *sweep) runSession(ctx context.Context, stop context.CancelFunc, t *tally, wg *sync.WaitGroup,
	sess prompts.Session, seq0 int, ready int64, open bool) (freed int64) {
	l := t.l
	capped := ready < 0
	due := max(ready, -ready)
	id := SessionID(l.level, l.repeat, sess.Index)
	if l.warmup {
		id = fmt.Sprintf("w-s%d", sess.Index-warmupSessions)
	}
	var c conversation
	prefix := ""
	if s.o.UniquePrompts {
		prefix = "[" + id + "] "
	}
	c.start(sess, prefix)
	category := ""
	if sess.FirstPrompt >= 0 {
		category = s.o.Prompts.Prompts[sess.FirstPrompt].Category
	}
	for i := range sess.Turns() {
		var think time.Duration
		if i > 0 {
			think = sess.Think[i-1]
			due += int64(think)
			if !sleepUntil(ctx, due) {
				return nowNs()
			}
		}
		if ctx.Err() != nil {
			return nowNs()
		}
		rec := measure.Record{Level: l.level, Repeat: l.repeat, Seq: seq0 + i, PromptSet: s.o.Prompts.Hash,
			Category: category, Session: id, Turn: i + 1, ThinkNs: int64(think), Warmup: l.warmup}
		maxTokens := s.o.MaxTokens
		if i == 0 {
			rec.Prompt = max(sess.FirstPrompt, 0)
			if sess.MaxTokens > 0 {
				rec.MaxTokens, maxTokens = sess.MaxTokens, sess.MaxTokens
			}
		}
		if open {
			rec.Rate, rec.Capped = l.level.Rate, capped && i == 0
		}
		var answer strings.Builder
		firstSend := s.q.doTurn(ctx, s.turnBody(&c, maxTokens), &rec, &turnIO{session: id, answer: &answer})
		// Up to the first send, as for single requests: finding a
		// connection the server had closed is not the client's delay.
		if open {
			rec.LateNs = max(0, firstSend-due)
		} else {
			rec.DispatchLagNs = max(0, firstSend-due)
		}
		due = rec.EndNs
		if due == 0 {
			due = nowNs()
		}
		ok := rec.OK()
		s.finish(ctx, stop, t, rec, wg)
		if !ok {
			return due
		}
		if i+1 < sess.Turns() {
			c.next(answer.String(), sess.FollowUps[i])
		}
	}
	return due
}

// sleepUntil waits until the Unix ns at; false when ctx ended first.
func sleepUntil(ctx context.Context, at int64) bool {
	wait := at - nowNs()
	if wait <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(time.Duration(wait))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
