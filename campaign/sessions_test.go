package campaign

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// sessionsLine is the line of the config withPrompts puts its first added
// line on.
func sessionsLine(t *testing.T) int {
	t.Helper()
	for i, l := range strings.Split(goodFiles[cfgPath], "\n") {
		if strings.Contains(l, "max_tokens: 50") {
			return i + 2
		}
	}
	t.Fatal("no max_tokens line in the good config")
	return 0
}

func TestLoadSessions(t *testing.T) {
	mapped, errs := loadMem(t, withPrompts(`  workload:
    sessions:
      turns: {dist: uniform, min: 2, max: 6}
      think_time: {dist: normal, mean: 2s, sd: 500ms, min: 100ms, max: 5s}
      first_prompt: prompts
      follow_up: {dist: fixed, value: 40}`, nil))
	if errs != nil {
		t.Fatal(errs)
	}
	text, errs := loadMem(t, withPrompts(`  workload: {sessions: {turns: "uniform(min=2,max=6)", think_time: {dist: normal, mean: 2000ms, sd: 0.5s, min: 100ms, max: 5s}, follow_up: 40}}`, nil))
	if errs != nil {
		t.Fatal(errs)
	}
	want := "turns=uniform(min=2,max=6) think_ms=normal(mean=2000,sd=500,min=100,max=5000) first=prompts follow_up=40"
	for _, c := range []*Campaign{mapped, text} {
		if c.Sweep.Sessions == nil || c.Sweep.Sessions.String() != want {
			t.Fatalf("sessions %v, want %s", c.Sweep.Sessions, want)
		}
	}
	if mapped.Fingerprint() != text.Fingerprint() {
		t.Error("two spellings of one workload have different fingerprints")
	}
	plain, errs := loadMem(t, goodFiles)
	if errs != nil {
		t.Fatal(errs)
	}
	if plain.Fingerprint() == mapped.Fingerprint() {
		t.Error("sessions do not change the fingerprint")
	}
	if s := mapped.Sweep.Sessions; s.MeanTurns() != 4 || s.MeanThink() != 2*time.Second {
		t.Errorf("mean turns %g, think %s", s.MeanTurns(), s.MeanThink())
	}
	none, errs := loadMem(t, withPrompts("  workload: {sessions: {turns: 3, think_time: 0s}}", nil))
	if errs != nil {
		t.Fatal(errs)
	}
	if s := none.Sweep.Sessions; s == nil || s.String() != "turns=3 think_ms=0 first=prompts follow_up=prompts" {
		t.Errorf("sessions %v", s)
	}
}

// TestLoadSessionsErrors: a malformed sessions block is an error at its
// file and line.
func TestLoadSessionsErrors(t *testing.T) {
	line := sessionsLine(t)
	tests := []struct {
		name, yaml string
		line       int // of the config, relative to the block's first
		want       string
	}{
		{"not a mapping", "  workload: {sessions: 3}", 0, "sweep.workload.sessions: want a mapping"},
		{"unknown workload key", "  workload: {trips: 3}", 0, `sweep.workload: unknown key "trips"`},
		{"unknown key", "  workload:\n    sessions:\n      turns: 3\n      thinking: 2s", 3, `unknown key "thinking"`},
		{"no turns", "  workload:\n    sessions:\n      think_time: 2s", 2, "turns missing"},
		{"zero turns", "  workload:\n    sessions:\n      turns: 0", 2, "sweep.workload.sessions.turns"},
		{"unbounded turns", "  workload:\n    sessions:\n      turns: {dist: normal, mean: 5, sd: 2}", 2, "want 1 to 1000 turns"},
		{"bare think time", "  workload:\n    sessions:\n      turns: 3\n      think_time: 2", 3, `unparsable duration "2"`},
		{"negative think time", "  workload:\n    sessions:\n      turns: 3\n      think_time: -2s", 3, "must not be negative"},
		{"think min above max", "  workload:\n    sessions:\n      turns: 3\n      think_time: {dist: uniform, min: 5s, max: 1s}", 3, "min 5000 is above max 1000"},
		{"think without dist", "  workload:\n    sessions:\n      turns: 3\n      think_time: {mean: 1s}", 3, "dist missing"},
		{"think too long", "  workload:\n    sessions:\n      turns: 3\n      think_time: 2h", 3, "at most 3600000 ms"},
		{"bad follow-up", "  workload:\n    sessions:\n      turns: 3\n      follow_up: chats", 3, `follow_up: length "chats"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := loadMem(t, withPrompts(tt.yaml, nil))
			at := fmt.Sprintf("%s:%d:", cfgPath, line+tt.line)
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, at) && strings.Contains(e, tt.want) }) {
				t.Errorf("errors %q, want one at %s with %q", errs, at, tt.want)
			}
		})
	}
}
