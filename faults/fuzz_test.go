package faults

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// journalSeed is a real journal's shape: campaign phases, a scenario's
// phases, an error.
const journalSeed = `{"time":"2026-11-30T02:00:00Z","phase":"lock","event":"start"}
{"time":"2026-11-30T02:00:00Z","phase":"lock","event":"end","outcome":"ok","duration_s":0.01}
{"time":"2026-11-30T02:00:01Z","scenario":"a","attempt":1,"phase":"scenario","event":"start"}
{"time":"2026-11-30T02:00:02Z","scenario":"a","attempt":1,"phase":"ready","event":"end","outcome":"failed","duration_s":1.5,"error":"server log shows \"Traceback\""}
{"time":"2026-11-30T02:00:03Z","scenario":"a","attempt":1,"phase":"scenario","event":"end","outcome":"failed"}
`

// FuzzJournal checks the journal reader on any bytes and the promise
// resume rests on: whatever a crash left (a torn last line included), if it
// reads, reopening for append cuts the torn tail, and the next entry reads
// back after everything that was there.
func FuzzJournal(f *testing.F) {
	f.Add([]byte(journalSeed))
	f.Add([]byte(journalSeed[:len(journalSeed)/2]))
	f.Add([]byte("{\"time\": garbage\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), results.JournalFile)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		before, err := orchestrator.ReadJournal(path)
		if err != nil {
			return // refused, with a message: fine for garbage
		}
		j, err := orchestrator.OpenJournal(path)
		if err != nil {
			t.Fatalf("a journal that reads cannot be reopened: %v", err)
		}
		next := orchestrator.JournalEntry{Time: time.Unix(0, 0).UTC(), Scenario: "z", Phase: "scenario", Event: "start"}
		if err := j.Append(next); err != nil {
			t.Fatal(err)
		}
		j.Close()
		after, err := orchestrator.ReadJournal(path)
		if err != nil {
			t.Fatalf("appending to a readable journal made it unreadable: %v\nbefore: %q", err, data)
		}
		if len(after) != len(before)+1 || after[len(after)-1].Scenario != "z" {
			t.Fatalf("after one append: %d entries (last %+v), want %d ending with z\nbefore: %q",
				len(after), after[len(after)-1], len(before)+1, data)
		}
	})
}

// FuzzRecords checks the requests.jsonl reader on any bytes: an error or
// records, never a panic; a torn last line is dropped, not an error.
func FuzzRecords(f *testing.F) {
	f.Add([]byte(`{"level":1,"seq":0,"send_ns":1,"end_ns":2,"tokens":24,"status":200}` + "\n"))
	f.Add([]byte(`{"level":1,"seq":0,"send_ns":1,"end_ns":2,"tokens":24,"status":200}` + "\n{\"level\":1,\"se"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := results.DecodeRecords(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		// Whole lines that decoded must survive a torn line after them.
		torn := append(append([]byte{}, data...), []byte("\n{\"level\":")...)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			return // data's own last line was torn; appending changes it
		}
		again, err := results.DecodeRecords(bytes.NewReader(torn), "fuzz")
		if err != nil {
			t.Fatalf("a torn last line made readable records unreadable: %v", err)
		}
		if len(again) != len(recs) {
			t.Fatalf("%d records before a torn line, %d after", len(recs), len(again))
		}
	})
}
