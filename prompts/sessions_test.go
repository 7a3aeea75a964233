package prompts

import (
	"reflect"
	"testing"
	"time"
)

func TestSessionsDrawn(t *testing.T) {
	set, err := Load(Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseSessions("turns=uniform(min=1,max=6) think_ms=uniform(min=100,max=900) first=prompts follow_up=uniform(min=5,max=30)")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := NewSessions(spec, set, 4)
	b, _ := NewSessions(spec, set, 4)
	c, _ := NewSessions(spec, set, 5)
	var turns, sameAsOtherSeed int
	for k := range 200 {
		s := a.Session(k)
		if !reflect.DeepEqual(s, b.Session(k)) {
			t.Fatalf("session %d differs between two draws of one seed", k)
		}
		if reflect.DeepEqual(s, c.Session(k)) {
			sameAsOtherSeed++
		}
		if s.Turns() < 1 || s.Turns() > 6 || len(s.Think) != s.Turns()-1 || s.FirstPrompt < 0 {
			t.Fatalf("session %d: %+v", k, s)
		}
		for _, th := range s.Think {
			if th < 100*time.Millisecond || th > 900*time.Millisecond {
				t.Fatalf("session %d think %s outside 100–900 ms", k, th)
			}
		}
		turns += s.Turns()
	}
	if mean := float64(turns) / 200; mean < 3 || mean > 4 {
		t.Errorf("mean turns %g, want about 3.5", mean)
	}
	if sameAsOtherSeed > 5 {
		t.Errorf("%d of 200 sessions the same under another seed", sameAsOtherSeed)
	}
	n, total := a.Plan(25)
	if total < 25 || total-a.Session(n-1).Turns() >= 25 {
		t.Errorf("plan for 25 requests: %d sessions of %d turns", n, total)
	}
}

func TestParseSessions(t *testing.T) {
	for _, tt := range []struct {
		text, want string
		ok         bool
	}{
		{"turns=3", "turns=3 think_ms=0 first=prompts follow_up=prompts", true},
		{"turns=uniform(min=2,max=4) think_ms=500 first=800 follow_up=prompts", "turns=uniform(min=2,max=4) think_ms=500 first=800 follow_up=prompts", true},
		{"think_ms=5", "", false},
		{"turns=0", "", false},
		{"turns=2000", "", false},
		{"turns=3 think_ms=uniform(min=1,max=4000000)", "", false}, // over an hour
		{"turns=3 turns=4", "", false},
		{"turns=3 chats=4", "", false},
	} {
		s, err := ParseSessions(tt.text)
		if (err == nil) != tt.ok || (tt.ok && s.String() != tt.want) {
			t.Errorf("ParseSessions(%q) = %s, %v; want %s, ok %v", tt.text, s, err, tt.want, tt.ok)
		}
		if tt.ok {
			if back, err := ParseSessions(s.String()); err != nil || back.String() != s.String() {
				t.Errorf("%q does not read back: %v", s, err)
			}
		}
	}
}
