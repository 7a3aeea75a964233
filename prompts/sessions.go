package prompts

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// FromPrompts is what SessionSpec.First and FollowUp say, in text, when a
// session's messages are drawn from the sweep's prompt set.
const FromPrompts = "prompts"

// MaxTurns bounds the turns of one session: the whole history is resent
// every turn, so a session's tokens grow with the square of its turns.
const MaxTurns = 1000

// MaxThink bounds one think time, in milliseconds (an hour): longer is a
// typo, and a level would outlast any night.
const MaxThink = 3_600_000

// sessionStream separates the sessions' random streams from the prompt
// order's and the synthetic set's, which take the same sweep seed.
const sessionStream = 0x5e55_1025

// SessionSpec describes multi-turn sessions: each simulated user holds a
// conversation of Turns turns, each turn sending the whole history (every
// earlier message and the server's answers) plus one new user message, and
// waits a think time between an answer and its next message.
type SessionSpec struct {
	Turns Dist // turns per session, 1 to MaxTurns
	// Think is the pause between an answer and the next turn, in
	// milliseconds (0 to MaxThink): a fixed 0 sends the next turn at once.
	Think Dist
	// First and FollowUp say where the first and each later user message
	// come from: nil draws a prompt from the sweep's set (the first message
	// is the whole prompt, a follow-up its last message); a length
	// distribution cuts text of that many tokens from the built-in set's,
	// as a synthetic set does.
	First, FollowUp *Dist
}

// Check reports what is wrong with the spec, or nil.
func (s SessionSpec) Check() error {
	var errs []error
	if err := s.Turns.Check(); err != nil {
		errs = append(errs, fmt.Errorf("turns: %w", err))
	} else if lo, hi := s.Turns.Range(); lo < 1 || hi > MaxTurns {
		errs = append(errs, fmt.Errorf("turns %s: want 1 to %d", s.Turns, MaxTurns))
	}
	if err := CheckThink(s.Think); err != nil {
		errs = append(errs, fmt.Errorf("think time: %w", err))
	}
	for _, d := range []struct {
		what string
		d    *Dist
	}{{"first prompt", s.First}, {"follow-up", s.FollowUp}} {
		if d.d != nil {
			if err := d.d.Check(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", d.what, err))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckThink is Dist.Check for milliseconds, where a fixed 0 (no think
// time) is allowed and the bound is MaxThink.
func CheckThink(d Dist) error {
	if d.Kind == DistFixed && d.Value == 0 {
		return nil
	}
	if _, hi := d.Range(); hi > MaxThink {
		return fmt.Errorf("%s ms: want at most %d ms (give a normal a max)", d, MaxThink)
	}
	return d.Check()
}

// Range is the smallest and largest value d can give; a normal without a
// max reaches MaxLength.
func (d Dist) Range() (lo, hi int) {
	switch d.Kind {
	case DistUniform:
		return d.Min, d.Max
	case DistNormal:
		return d.bounds()
	}
	return d.Value, d.Value
}

// Expected is the mean of d; for a truncated normal, the mean asked for.
func (d Dist) Expected() float64 {
	switch d.Kind {
	case DistUniform:
		return float64(d.Min+d.Max) / 2
	case DistNormal:
		return d.Mean
	}
	return float64(d.Value)
}

// MeanTurns is the mean number of turns of a session.
func (s SessionSpec) MeanTurns() float64 { return s.Turns.Expected() }

// MeanThink is the mean think time between turns.
func (s SessionSpec) MeanThink() time.Duration {
	return time.Duration(s.Think.Expected() * float64(time.Millisecond))
}

// String is the spec's canonical text, which ParseSessions reads back and
// the sweep fingerprint hashes:
// "turns=DIST think_ms=DIST first=prompts|DIST follow_up=prompts|DIST".
func (s SessionSpec) String() string {
	src := func(d *Dist) string {
		if d == nil {
			return FromPrompts
		}
		return d.String()
	}
	return fmt.Sprintf("turns=%s think_ms=%s first=%s follow_up=%s", s.Turns, s.Think, src(s.First), src(s.FollowUp))
}

// ParseSessions reads a spec in String's form; think_ms, first and
// follow_up may be left out (0, prompts, prompts).
func ParseSessions(text string) (SessionSpec, error) {
	s := SessionSpec{Think: Dist{Kind: DistFixed}}
	seen := map[string]bool{}
	for _, f := range strings.Fields(text) {
		k, v, _ := strings.Cut(f, "=")
		if seen[k] {
			return s, fmt.Errorf("sessions %q: %s given twice", text, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "turns":
			s.Turns, err = ParseDist(v)
		case "think_ms":
			if v == "0" {
				s.Think = Dist{Kind: DistFixed}
				break
			}
			s.Think, err = ParseDist(v)
		case "first", "follow_up":
			var d *Dist
			if v != FromPrompts {
				var x Dist
				x, err = ParseDist(v)
				d = &x
			}
			if k == "first" {
				s.First = d
			} else {
				s.FollowUp = d
			}
		default:
			return s, fmt.Errorf("sessions %q: %q: want turns=DIST think_ms=DIST first=prompts|DIST follow_up=prompts|DIST", text, f)
		}
		if err != nil {
			return s, fmt.Errorf("sessions %s: %w", k, err)
		}
	}
	if !seen["turns"] {
		return s, fmt.Errorf("sessions %q: want turns=DIST", text)
	}
	return s, s.Check()
}

// Session is one drawn conversation: its user messages and the pauses
// between them. Everything the client sends is in it except the server's
// answers, which it learns as the session runs.
type Session struct {
	// Index is the session's number in its level, from 0.
	Index int
	// First is the first turn's messages (a prompt of the set may hold a
	// system message or earlier turns of its own); FirstText the same
	// flattened, for the completions endpoint; FirstPrompt the prompt's
	// index in the set, -1 for synthetic text.
	First       []Message
	FirstText   string
	FirstPrompt int
	// MaxTokens is the first prompt's own max_tokens (0: the sweep's).
	MaxTokens int
	// FollowUps are the user messages of turns 2, 3, …; Think[i] is the
	// pause before FollowUps[i] is sent, after the previous answer ended.
	FollowUps []string
	Think     []time.Duration
}

// Turns is the number of turns of the session.
func (s Session) Turns() int { return 1 + len(s.FollowUps) }

// Sessions draws the sessions of a sweep: session k is the same for every
// level, scenario and run of one seed and spec, and independent of how many
// others are drawn.
type Sessions struct {
	spec  SessionSpec
	set   *Set
	seed  int64
	words []string // the synthetic messages' text source
}

// NewSessions prepares the sessions of spec over the prompt set, from seed.
func NewSessions(spec SessionSpec, set *Set, seed int64) (*Sessions, error) {
	if err := spec.Check(); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	if set == nil || len(set.Prompts) == 0 {
		return nil, errors.New("sessions: no prompt set")
	}
	s := &Sessions{spec: spec, set: set, seed: seed}
	if spec.First != nil || spec.FollowUp != nil {
		w, err := builtinWords()
		if err != nil {
			return nil, err
		}
		s.words = w
	}
	return s, nil
}

// Spec is the spec the sessions are drawn from.
func (s *Sessions) Spec() SessionSpec { return s.spec }

// Session draws session k. Each session has its own random stream (the
// seed and k), so the same k gives the same session whatever else is drawn.
func (s *Sessions) Session(k int) Session {
	r := rand.New(rand.NewPCG(uint64(s.seed), sessionStream+uint64(k)))
	turns := s.spec.Turns.Draw(r)
	out := Session{Index: k, FirstPrompt: -1}
	if s.spec.First == nil {
		i := r.IntN(len(s.set.Prompts))
		p := s.set.Prompts[i]
		out.First, out.FirstText, out.FirstPrompt, out.MaxTokens = p.Messages, p.Text, i, p.MaxTokens
	} else {
		text := s.cut(r, s.spec.First.Draw(r))
		out.First, out.FirstText = []Message{{Role: "user", Content: text}}, text
	}
	for range turns - 1 {
		think := 0
		if !(s.spec.Think.Kind == DistFixed && s.spec.Think.Value == 0) {
			think = s.spec.Think.Draw(r)
		}
		out.Think = append(out.Think, time.Duration(think)*time.Millisecond)
		if s.spec.FollowUp == nil {
			msgs := s.set.Prompts[r.IntN(len(s.set.Prompts))].Messages
			out.FollowUps = append(out.FollowUps, msgs[len(msgs)-1].Content)
		} else {
			out.FollowUps = append(out.FollowUps, s.cut(r, s.spec.FollowUp.Draw(r)))
		}
	}
	return out
}

// cut is text of about tokens tokens: consecutive words of the built-in
// text from a random word, wrapping around, as Synthesize cuts them.
func (s *Sessions) cut(r *rand.Rand, tokens int) string {
	n := TokensToWords(tokens)
	at := r.IntN(len(s.words))
	var b strings.Builder
	for j := range n {
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.words[(at+j)%len(s.words)])
	}
	return b.String()
}

// Plan is how many of the sessions 0, 1, … a level of n requests runs:
// the fewest whose turns add up to n or more, so that every session runs
// whole and the level sends at least n requests.
func (s *Sessions) Plan(n int) (sessions, turns int) {
	for turns < n {
		turns += s.Session(sessions).Turns()
		sessions++
	}
	return sessions, turns
}
