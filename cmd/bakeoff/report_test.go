package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// writeTestRun writes a two-scenario synthetic run; slowdown slows the
// baseline, fingerprint and maxTokens make the sweep differ.
func writeTestRun(t *testing.T, dir string, seed uint64, slowdown float64, fingerprint string, maxTokens int) string {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 5}
	s.MaxTokens = maxTokens
	base := verdicttest.Baseline
	base.Slowdown = slowdown
	m := verdicttest.Manifest("demo", "20260101T000000Z", fingerprint, "baseline", s, "baseline", "eagle3")
	if _, err := verdicttest.WriteRun(dir, m, []verdicttest.Scenario{
		{Name: "baseline", Records: verdicttest.Simulate(base, s, seed)},
		{Name: "eagle3", Records: verdicttest.Simulate(verdicttest.Eagle3TopK4, s, seed+1)},
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportCommand(t *testing.T) {
	dir := writeTestRun(t, t.TempDir(), 1, 1, "sha256:aa", 200)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{dir}, exitOK, "eagle3: inconclusive at C=1; −"},
		{[]string{dir}, exitOK, "launch-to-launch variation not measured"},
		{[]string{dir, "--format", "md"}, exitOK, "- eagle3: inconclusive at C=1"},
		{[]string{dir}, exitOK, "Details: bakeoff report " + dir + " --format text --detail"},
		{[]string{dir, "--detail"}, exitOK, "per-req tok/s"},
		{[]string{dir, "--format", "text", "--detail"}, exitOK, "Fairness:"},
		{[]string{"--format", "csv", dir}, exitOK, "scenario,level,launches"},
		{[]string{dir, "--format", "json"}, exitOK, `"baseline": "baseline"`},
		{[]string{dir, "--format", "benchstat"}, exitOK, "BenchmarkServe/C=1/scenario=baseline 1 "},
		{[]string{dir, "--alpha", "0.01"}, exitOK, "p < 0.01 after"},
		{[]string{dir, "--alpha", "0.01", "--detail"}, exitOK, "alpha 0.01"},
		{[]string{dir, "--format", "xml"}, exitBadInput, ""},
		{[]string{dir, "--alpha", "2"}, exitBadInput, ""},
		{[]string{}, exitBadInput, ""},
		{[]string{filepath.Join(dir, "nope")}, exitBadInput, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			e, out, errOut := testEnv()
			code := run(context.Background(), e, append([]string{"report"}, tc.args...))
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("stdout lacks %q:\n%s", tc.want, out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "report")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bakeoff report without --write made report/ (%v)", err)
	}
	e, _, errOut := testEnv()
	if code := run(context.Background(), e, []string{"report", dir, "--write"}); code != exitOK {
		t.Fatalf("--write: exit %d; stderr: %s", code, errOut)
	}
	for _, name := range []string{"index.html", "verdict.md", "summary.csv", "verdict.json", "benchstat.txt", "throughput.png", "speedup.svg", "latency-p99.png"} {
		if fi, err := os.Stat(filepath.Join(dir, "report", name)); err != nil || fi.Size() == 0 {
			t.Errorf("report/%s not written: %v", name, err)
		}
	}
}

// TestReportWritesOnlyWhatItIsAsked: `bakeoff report` of a run whose
// report/ exists leaves every file there byte for byte, whatever the
// format, the baseline or the alpha it is asked for; --out writes the one
// file named; --write rewrites report/ from the verdict asked for.
func TestReportWritesOnlyWhatItIsAsked(t *testing.T) {
	dir := writeTestRun(t, t.TempDir(), 1, 1, "sha256:aa", 200)
	if code := run(context.Background(), must(testEnv()), []string{"report", dir, "--write"}); code != exitOK {
		t.Fatalf("--write: exit %d", code)
	}
	before := treeHashes(t, dir)
	out := filepath.Join(t.TempDir(), "other.csv")
	for _, args := range [][]string{
		{"--format", "csv", "--baseline", "eagle3"},
		{"--format", "html", "--baseline", "eagle3", "--alpha", "0.01"},
		{"--format", "md"},
		{},
		{"--format", "csv", "--baseline", "eagle3", "--out", out},
	} {
		e, stdout, errOut := testEnv()
		if code := run(context.Background(), e, append([]string{"report", dir}, args...)); code != exitOK {
			t.Fatalf("%v: exit %d; stderr: %s", args, code, errOut)
		}
		if !slices.Contains(args, "--out") && stdout.Len() == 0 {
			t.Errorf("%v printed nothing", args)
		}
		if after := treeHashes(t, dir); !maps.Equal(before, after) {
			t.Errorf("bakeoff report %v changed the run directory:\nbefore %v\nafter  %v", args, before, after)
		}
	}
	csv, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(csv), "scenario,level,launches") || !strings.Contains(string(csv), "eagle3") {
		t.Errorf("--out: %v\n%s", err, csv)
	}
	e, _, errOut := testEnv()
	if code := run(context.Background(), e, []string{"report", dir, "--baseline", "eagle3", "--write"}); code != exitOK {
		t.Fatalf("--write: exit %d; stderr: %s", code, errOut)
	}
	if after := treeHashes(t, dir); after["report/verdict.md"] == before["report/verdict.md"] {
		t.Errorf("--write --baseline eagle3 did not rewrite verdict.md")
	}
}

// must drops testEnv's buffers.
func must(e *env, _, _ *bytes.Buffer) *env { return e }

// treeHashes is the SHA-256 of every file under root, by path relative to
// it.
func treeHashes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDiffCommand(t *testing.T) {
	root := t.TempDir()
	old := writeTestRun(t, filepath.Join(root, "old"), 1, 1, "sha256:aa", 200)
	same := writeTestRun(t, filepath.Join(root, "same"), 9, 1, "sha256:aa", 200)
	slower := writeTestRun(t, filepath.Join(root, "slower"), 9, 1.08, "sha256:aa", 200)
	unlike := writeTestRun(t, filepath.Join(root, "unlike"), 9, 1, "sha256:bb", 256)
	// Two more runs of the campaign: with old and same (or slower), NEW's
	// folder holds the three runs of history a diff judges absolute
	// figures with; unlike, of another sweep, is left out of it.
	for i := range 2 {
		writeTestRun(t, filepath.Join(root, fmt.Sprintf("night-%d", i)), uint64(20+i), 1, "sha256:aa", 200)
	}
	// A folder of history with a run that cannot be read.
	other := t.TempDir()
	broken := filepath.Join(other, "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "manifest.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// And one whose run's records have a bad line.
	badRecords := t.TempDir()
	bad := writeTestRun(t, filepath.Join(badRecords, "night"), 30, 1, "sha256:aa", 200)
	records, err := filepath.Glob(filepath.Join(bad, "*", "requests.jsonl"))
	if err != nil || len(records) == 0 {
		t.Fatalf("no records to break: %v", err)
	}
	if err := os.WriteFile(records[0], []byte("{bad line\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"same", []string{old, same}, exitOK, "no regression beyond 3% in"},
		{"history records unreadable", []string{old, same, "--history", badRecords}, exitBadInput, "the run " + bad + " of the history cannot be read: "},
		{"history records left out", []string{old, same, "--history", badRecords, "--skip-unreadable"}, exitOK, "not in the history: " + bad},
		{"slower", []string{old, slower}, exitFailed, "REGRESSION"},
		{"history named", []string{old, slower, "--history", root}, exitFailed, "learned from 4 runs of this campaign"},
		{"history skipped", []string{old, slower}, exitFailed, "not in the history: " + unlike + ": another sweep"},
		// Without history the baseline's own 8% is not judged, and said.
		{"slower, no history", []string{old, slower, "--history", "none"}, exitOK, "cannot be separated from the run effect without 3 runs of history (have 0)"},
		{"history unreadable", []string{old, same, "--history", other}, exitBadInput, "the run " + broken + " of the history cannot be read: " + filepath.Join(broken, "manifest.json")},
		{"history unreadable left out", []string{old, same, "--history", other, "--skip-unreadable"}, exitOK, "not in the history: " + broken},
		{"history not a folder", []string{old, slower, "--history", filepath.Join(root, "nowhere")}, exitBadInput, "not a folder of runs"},
		{"slower within a big threshold", []string{old, slower, "--threshold", "20%"}, exitOK, "within threshold"},
		{"unlike refused", []string{old, unlike}, exitBadInput, "max_tokens: 200 → 256"},
		{"unlike forced", []string{old, unlike, "--force"}, exitOK, "--force"},
		{"bad threshold", []string{old, same, "--threshold", "x"}, exitBadInput, "--threshold"},
		// Percent as in configs: a bare 20 is 20%; a bare fraction is
		// ambiguous and refused.
		{"a bare threshold is percent", []string{old, slower, "--threshold", "20"}, exitOK, "within threshold"},
		{"a bare fraction refused", []string{old, same, "--threshold", "0.03"}, exitBadInput, "0.03 is ambiguous: write 3%"},
		{"one dir", []string{old}, exitBadInput, "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, out, errOut := testEnv()
			code := run(context.Background(), e, append([]string{"diff"}, tc.args...))
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if both := out.String() + errOut.String(); !strings.Contains(both, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, both)
			}
		})
	}
}
