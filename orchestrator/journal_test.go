package orchestrator

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestJournalTornLine: a writer killed mid-line leaves a torn last line;
// readers drop it and the next writer cuts it off before appending, so the
// journal stays one valid entry per line.
func TestJournalTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range []JournalEntry{
		{Time: t0, Scenario: "a", Attempt: 1, Phase: PhaseScenario, Event: "start"},
		{Time: t0, Scenario: "a", Attempt: 1, Phase: PhaseScenario, Event: "end", Outcome: OutcomeOK, DurationS: 3},
		{Time: t0, Scenario: "b", Attempt: 1, Phase: PhaseScenario, Event: "start"},
	} {
		if err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","scenario":"b","pha`)
	f.Close()

	entries, err := ReadJournal(path)
	if err != nil || len(entries) != 3 {
		t.Fatalf("read %d entries, %v; want 3 and the torn line dropped", len(entries), err)
	}
	if got := Finished(entries); len(got) != 1 || got[LaunchKey{"a", 1}] != OutcomeOK {
		t.Errorf("Finished = %v, want a ok only", got)
	}
	j, err = OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(JournalEntry{Time: t0, Scenario: "b", Attempt: 1, Phase: PhaseScenario, Event: "end", Outcome: OutcomeFailed}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	entries, err = ReadJournal(path)
	if err != nil || len(entries) != 4 {
		t.Fatalf("after reopening: %d entries, %v; want 4", len(entries), err)
	}
	if got := Finished(entries); got[LaunchKey{"b", 1}] != OutcomeFailed {
		t.Errorf("Finished = %v, want b failed", got)
	}
	if got := Attempts(entries); got[LaunchKey{"a", 1}] != 1 || got[LaunchKey{"b", 1}] != 1 {
		t.Errorf("Attempts = %v", got)
	}
}

// TestReadJournalUnterminatedLine: a last line without its newline is torn
// even when it parses, since the next OpenJournal cuts it off: reading must
// not count it, or the entry would vanish after the next append.
func TestReadJournalUnterminatedLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want int
	}{
		{"parses", "{\"phase\":\"lock\",\"event\":\"start\"}\n{\"phase\":\"lock\",\"event\":\"end\"}", 1},
		{"torn json", "{\"phase\":\"lock\",\"event\":\"start\"}\n{\"phase\":\"lo", 1},
		{"only line", "{\"phase\":\"lock\",\"event\":\"start\"}", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal.jsonl")
			if err := os.WriteFile(path, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			before, err := ReadJournal(path)
			if err != nil || len(before) != tc.want {
				t.Fatalf("read %d entries, %v; want %d", len(before), err, tc.want)
			}
			j, err := OpenJournal(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Append(JournalEntry{Phase: PhaseScenario, Scenario: "z", Event: "start"}); err != nil {
				t.Fatal(err)
			}
			j.Close()
			after, err := ReadJournal(path)
			if err != nil || len(after) != tc.want+1 {
				t.Fatalf("after one append: %d entries, %v; want %d", len(after), err, tc.want+1)
			}
		})
	}
}

func TestReadJournalBadMiddleLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	os.WriteFile(path, []byte("{\"phase\":\"lock\",\"event\":\"start\"}\nnot json\n{\"phase\":\"lock\",\"event\":\"end\"}\n"), 0o600)
	if _, err := ReadJournal(path); err == nil {
		t.Fatal("a bad line in the middle was accepted")
	}
}

func TestPhaseTimes(t *testing.T) {
	entries := []JournalEntry{
		{Phase: "ready", Event: "end", Outcome: OutcomeOK, DurationS: 10},
		{Phase: "sweep", Event: "end", Outcome: OutcomeOK, DurationS: 30},
		{Phase: "ready", Event: "end", Outcome: OutcomeFailed, DurationS: 5},
		{Phase: PhaseScenario, Event: "end", Outcome: OutcomeOK, DurationS: 100},
		{Phase: "sweep", Event: "start"},
	}
	got := PhaseTimes(entries)
	if len(got) != 2 || got[0].Phase != "sweep" || got[0].Seconds != 30 || got[1].Seconds != 15 || got[1].Count != 2 {
		t.Errorf("PhaseTimes = %+v", got)
	}
}

// TestJournalRounds: finished launches and attempts are kept per scenario
// and round; a journal written before rounds counts as round 1.
func TestJournalRounds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := func(name string, round, attempt int, outcome string) JournalEntry {
		return JournalEntry{Time: t0, Scenario: name, Round: round, Attempt: attempt, Phase: PhaseScenario,
			Event: "end", Outcome: outcome}
	}
	entries := []JournalEntry{
		end("a", 0, 1, OutcomeOK), // before rounds
		end("a", 2, 1, OutcomeFailed),
		end("a", 2, 2, OutcomeOK),
		end("b", 1, 1, OutcomeOK),
		end("b", 2, 1, OutcomeCanceled),
		{Time: t0, Scenario: "b", Round: 3, Attempt: 1, Phase: "sweep", Event: "start"},
	}
	wantFinished := map[LaunchKey]string{{"a", 1}: OutcomeOK, {"a", 2}: OutcomeOK, {"b", 1}: OutcomeOK}
	if got := Finished(entries); !maps.Equal(got, wantFinished) {
		t.Errorf("Finished = %v, want %v", got, wantFinished)
	}
	wantAttempts := map[LaunchKey]int{{"a", 1}: 1, {"a", 2}: 2, {"b", 1}: 1, {"b", 2}: 1, {"b", 3}: 1}
	if got := Attempts(entries); !maps.Equal(got, wantAttempts) {
		t.Errorf("Attempts = %v, want %v", got, wantAttempts)
	}
}
