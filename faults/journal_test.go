package faults

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestDamagedJournalOnResume damages a finished run's journal the ways a
// crash or a disk can, then resumes: a torn last line is dropped (the
// scenario it ended runs again, and ends exactly once); a damaged line in
// the middle, or a journal of garbage, is refused with the file and line,
// never a panic, and nothing runs.
func TestDamagedJournalOnResume(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := spec{name: "journal", scenarios: []scen{{name: "a"}, {name: "b"}}}
	cfg := r.write(s)
	base := filepath.Join(r.dir, "run")
	if res := r.bakeoff("run", cfg, "--out", base); res.code != 0 {
		t.Fatalf("first run: %s", res)
	}
	data, err := os.ReadFile(filepath.Join(base, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	// The line that ends scenario b: cut it, and what follows, in half.
	bEnd := -1
	for i, l := range lines {
		if strings.Contains(l, `"scenario":"b"`) && strings.Contains(l, `"phase":"scenario"`) && strings.Contains(l, `"event":"end"`) {
			bEnd = i
		}
	}
	if bEnd < 0 {
		t.Fatalf("no end line for scenario b in the journal:\n%s", data)
	}

	t.Run("torn last line", func(t *testing.T) {
		dir := copyRun(t, base)
		torn := strings.Join(lines[:bEnd], "") + lines[bEnd][:len(lines[bEnd])/2]
		writeJournal(t, dir, torn)
		res := r.bakeoff("run", cfg, "--resume", dir)
		if res.code != 0 {
			t.Fatalf("resume: %s", res)
		}
		r.checkEndState(dir, s, nil)
		if n := scenarioStarts(t, dir, "a"); n != 1 {
			t.Errorf("scenario a (finished before the tear) ran %d times, want once", n)
		}
	})
	for _, tc := range []struct{ name, journal, want string }{
		{"bad line in the middle", strings.Join(lines[:2], "") + "{\"time\": garbage\n" + strings.Join(lines[2:], ""), "journal.jsonl:3"},
		{"all garbage", "\x00\x01\x02 not json\n\xff\xfe\n", "journal.jsonl:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRun(t, base)
			writeJournal(t, dir, tc.journal)
			before := r.sessions()
			res := r.bakeoff("run", cfg, "--resume", dir)
			if res.code == 0 {
				t.Fatalf("resumed from a damaged journal: %s", res)
			}
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("the refusal does not point at %s: %s", tc.want, res)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, results.JournalFile)); !bytes.Equal(got, []byte(tc.journal)) {
				t.Errorf("the damaged journal was rewritten; it must stay for a person to look at")
			}
			if n := r.sessions(); n != before {
				t.Errorf("the refused resume ran %d commands on the host", n-before)
			}
		})
	}
}

func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "run")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("copying the run: %v: %s", err, out)
	}
	return dst
}

func writeJournal(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, results.JournalFile), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func scenarioStarts(t *testing.T, dir, name string) int {
	n := 0
	for _, e := range journal(t, dir) {
		if e.Scenario == name && e.Phase == orchestrator.PhaseScenario && e.Event == "start" {
			n++
		}
	}
	return n
}
