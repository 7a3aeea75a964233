package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestRunEndsWithTheAnswer: the end of a run writes the report files, then
// prints the verdict's end block with how the run ended and where the report
// is last, every line within the terminal's width.
func TestRunEndsWithTheAnswer(t *testing.T) {
	dir := writeTestRun(t, t.TempDir(), 1, 1, "sha256:aa", 200)
	const width = 80
	var out bytes.Buffer
	where := report.Where{RunDir: dir, Status: []string{"Interrupted. Resume with: bakeoff run configs/demo.yaml --resume " + dir}}
	if _, err := printVerdict(&out, dir, width, where); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > width {
			t.Errorf("line %d is %d columns wide:\n%s", i+1, n, l)
		}
	}
	text := out.String()
	order := []string{"what the run checked", "┌", "eagle3: inconclusive", "Cost: ", "Interrupted. Resume with:",
		"Results: " + dir, "Report:  " + filepath.Join(dir, report.Dir, report.HTMLFile), "Details:", "bakeoff report "}
	at := 0
	for _, want := range order {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("the end lacks %q after byte %d:\n%s", want, at, text)
		}
		at += i
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Details: ") && !strings.HasPrefix(last, "  ") {
		t.Errorf("the end's last line is %q, want where the details are", last)
	}
	if _, err := os.Stat(filepath.Join(dir, report.Dir, report.TextFile)); err != nil {
		t.Errorf("the report files were not written: %v", err)
	}
}

// TestReportDetailSaysWhereTheTimeWent: the detail ends with the journal's
// time per phase, which the end of a run leaves out.
func TestReportDetailSaysWhereTheTimeWent(t *testing.T) {
	dir := writeTestRun(t, t.TempDir(), 1, 1, "sha256:aa", 200)
	journal := `{"time":"2026-01-01T00:00:00Z","scenario":"baseline","phase":"sweep","event":"end","outcome":"ok","duration_s":30}
{"time":"2026-01-01T00:00:00Z","scenario":"baseline","phase":"ready","event":"end","outcome":"ok","duration_s":10}
`
	if err := os.WriteFile(filepath.Join(dir, results.JournalFile), []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	e, out, errOut := testEnv()
	if code := run(context.Background(), e, []string{"report", dir, "--detail"}); code != exitOK {
		t.Fatalf("exit %d; stderr: %s", code, errOut)
	}
	if !strings.Contains(out.String(), "Where the time went:\n  sweep ") || !strings.Contains(out.String(), "30.0s   75.0%  (1×)\n  ready ") {
		t.Errorf("the detail lacks where the time went:\n%s", out)
	}
	e, out, _ = testEnv()
	if code := run(context.Background(), e, []string{"report", dir}); code != exitOK || strings.Contains(out.String(), "Where the time went") {
		t.Errorf("exit %d; the end of a run says where the time went:\n%s", code, out)
	}
}
