package orchestrator_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// TestRunModesUnderUmask: a campaign run under umask 022, and its report,
// leave a run directory that group and others can read (directories 0755,
// files 0644), so that it is shared without a chmod, except the files that
// may hold secrets (results.Secret: the manifest's resolved environment,
// the launch command lines, the server log, the journal), which are 0600.
// A token in the campaign's environment is in none of the others. The
// umask is the process's: the test is not parallel.
func TestRunModesUnderUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	w := newWorld(t)
	w.scenario("a", "")
	w.scenario("b", "a")
	const token = "hf-not-a-real-token"
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, rounds: 2, engineEnv: "    HF_TOKEN: " + token + "\n"})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil || out.Failed > 0 {
		t.Fatalf("%v %+v", err, out)
	}
	run, err := results.ReadRun(out.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteAll(out.RunDir, v); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(out.RunDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o644)
		switch {
		case d.IsDir():
			want = 0o755
		case results.Secret(d.Name()):
			want = 0o600
		}
		seen[d.Name()] = true
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
		// The token in engine.env is in the secret files only.
		if data, err := os.ReadFile(p); err == nil && !d.IsDir() && want != 0o600 && bytes.Contains(data, []byte(token)) {
			t.Errorf("%s, readable by others, holds the campaign's token", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{results.ManifestFile, results.SummaryFile, results.ResultFile, results.JournalFile,
		results.ServerLog, results.RequestsFile, results.LevelsFile, report.HTMLFile, report.MarkdownFile} {
		if !seen[name] {
			t.Errorf("the run has no %s: the test checks nothing of it", name)
		}
	}
}
