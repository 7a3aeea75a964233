package main

import (
	"context"
	"os"
	"path/filepath"
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
		{[]string{dir, "--format", "md"}, exitOK, "### Crossovers"},
		{[]string{"--format", "csv", dir}, exitOK, "scenario,level,launches"},
		{[]string{dir, "--format", "json"}, exitOK, `"baseline": "baseline"`},
		{[]string{dir, "--format", "benchstat"}, exitOK, "BenchmarkServe/C=1/scenario=baseline 1 "},
		{[]string{dir, "--alpha", "0.01"}, exitOK, "alpha 0.01"},
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
	for _, name := range []string{"index.html", "verdict.md", "summary.csv", "verdict.json", "benchstat.txt", "throughput.png", "speedup.svg", "latency-p99.png"} {
		if fi, err := os.Stat(filepath.Join(dir, "report", name)); err != nil || fi.Size() == 0 {
			t.Errorf("report/%s not written: %v", name, err)
		}
	}
}

func TestDiffCommand(t *testing.T) {
	root := t.TempDir()
	old := writeTestRun(t, filepath.Join(root, "old"), 1, 1, "sha256:aa", 200)
	same := writeTestRun(t, filepath.Join(root, "same"), 9, 1, "sha256:aa", 200)
	slower := writeTestRun(t, filepath.Join(root, "slower"), 9, 1.08, "sha256:aa", 200)
	unlike := writeTestRun(t, filepath.Join(root, "unlike"), 9, 1, "sha256:bb", 256)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"same", []string{old, same}, exitOK, "no significant regression"},
		{"slower", []string{old, slower}, exitFailed, "REGRESSION"},
		{"slower within a big threshold", []string{old, slower, "--threshold", "20%"}, exitOK, "within threshold"},
		{"unlike refused", []string{old, unlike}, exitBadInput, "max_tokens: 200 → 256"},
		{"unlike forced", []string{old, unlike, "--force"}, exitOK, "--force"},
		{"bad threshold", []string{old, same, "--threshold", "x"}, exitBadInput, "--threshold"},
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
