package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the run directory src into dst, so a report can write its
// report/ folder without touching testdata.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReportPreRoundsRun: a run written before rounds (each scenario's
// files in SCENARIO/, a rerun's first attempt in SCENARIO/history/1) still
// reads as one round for report and diff, its figures from the attempt
// that completed.
func TestReportPreRoundsRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	copyTree(t, filepath.Join("..", "..", "testdata", "pre-rounds-run"), dir)
	e, out, errOut := testEnv()
	// The detail names the attempt each scenario's figures come from.
	if code := run(context.Background(), e, []string{"report", dir, "--detail"}); code != exitOK {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"baseline tok/s", "eagle3 tok/s", "eagle3/history/1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report does not show %q:\n%s", want, out)
		}
	}
	e, out, errOut = testEnv()
	if code := run(context.Background(), e, []string{"diff", dir, dir}); code != exitOK {
		t.Fatalf("diff: exit %d\n%s%s", code, out, errOut)
	}
	if s := out.String(); !strings.Contains(s, "no regression beyond 3%") || !strings.Contains(s, "eagle3") {
		t.Errorf("diff of the run with itself:\n%s", out)
	}
}
