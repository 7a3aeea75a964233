package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryCommand: bakeoff history on a campaign's folder of runs
// prints the baseline's figures run by run and its change points, writes
// the trend page; a run it cannot read, a single run, a run's own folder,
// an unknown scenario or a missing folder is bad input, the unreadable run
// left out and listed with --skip-unreadable.
func TestHistoryCommand(t *testing.T) {
	root := t.TempDir()
	campaign := filepath.Join(root, "demo")
	for i := range 4 {
		writeTestRun(t, filepath.Join(campaign, fmt.Sprintf("night-%d", i)), uint64(40+i), 1, "sha256:aa", 200)
	}
	// Two campaigns beside it with a run each that cannot be read: a
	// manifest that is not JSON, and records with a bad line.
	withBroken := filepath.Join(root, "with-broken")
	for i := range 2 {
		writeTestRun(t, filepath.Join(withBroken, fmt.Sprintf("night-%d", i)), uint64(40+i), 1, "sha256:aa", 200)
	}
	broken := filepath.Join(withBroken, "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "manifest.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	withBadRecords := filepath.Join(root, "with-bad-records")
	for i := range 3 {
		writeTestRun(t, filepath.Join(withBadRecords, fmt.Sprintf("night-%d", i)), uint64(40+i), 1, "sha256:aa", 200)
	}
	records, err := filepath.Glob(filepath.Join(withBadRecords, "night-1", "*", "requests.jsonl"))
	if err != nil || len(records) == 0 {
		t.Fatalf("no records to break: %v", err)
	}
	if err := os.WriteFile(records[0], []byte("{bad line\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lone := filepath.Join(root, "lone")
	writeTestRun(t, filepath.Join(lone, "only"), 50, 1, "sha256:aa", 200)
	page := filepath.Join(root, "trend.html")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"table", []string{campaign}, exitOK, "baseline of campaign demo on a host the runs do not name: 4 runs, oldest first"},
		{"no change", []string{campaign}, exitOK, "no change point (E-divisive means"},
		{"broken run is an error", []string{withBroken}, exitBadInput, "the run " + broken + " of the history cannot be read: " + filepath.Join(broken, "manifest.json")},
		{"what to do about it", []string{withBroken}, exitBadInput, "repair or move that run, or pass --skip-unreadable to leave it out"},
		{"broken run left out", []string{withBroken, "--skip-unreadable"}, exitOK, "! not in the history: " + broken + ": "},
		{"bad records are an error", []string{withBadRecords}, exitBadInput, "the run " + filepath.Join(withBadRecords, "night-1") + " of the history cannot be read: "},
		{"bad records left out", []string{withBadRecords, "--skip-unreadable"}, exitOK, "not in the history: " + filepath.Join(withBadRecords, "night-1")},
		{"one level", []string{campaign, "--level", "C=5"}, exitOK, "C=5 tok/s"},
		{"another scenario", []string{campaign, "--scenario", "eagle3"}, exitOK, "eagle3 of campaign demo"},
		{"json", []string{campaign, "--json"}, exitOK, `"scenario": "baseline"`},
		{"page", []string{campaign, "--html", page}, exitOK, "trend: " + page},
		{"unknown scenario", []string{campaign, "--scenario", "nope"}, exitBadInput, `no run has a scenario "nope" (the runs have baseline, eagle3)`},
		{"bad level", []string{campaign, "--level", "many"}, exitBadInput, `--level "many": want a concurrency`},
		{"one run", []string{lone}, exitBadInput, "1 run of demo on a host the runs do not name to draw a history from; it needs 2"},
		{"a run's folder", []string{filepath.Join(lone, "only")}, exitBadInput, "is one run; give the folder of its campaign's runs (" + lone + ")"},
		{"no folder", []string{filepath.Join(root, "nowhere")}, exitBadInput, "not a folder of runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, out, errOut := testEnv()
			code := run(context.Background(), e, append([]string{"history"}, tc.args...))
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if both := out.String() + errOut.String(); !strings.Contains(both, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, both)
			}
		})
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "no change point") {
		t.Errorf("the trend page: %v\n%.400s", err, b)
	}
}
