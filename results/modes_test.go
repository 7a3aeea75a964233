package results

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// withUmask runs the test under umask mask; the umask is the process's, so
// tests that call it do not run in parallel.
func withUmask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// TestModesUnderUmask: under umask 022 what a run writes is readable by
// group and others (the report is shared without a chmod), except the
// files that may hold secrets, which stay user-only; under umask 077
// everything is user-only. Downloads get the same modes as written files.
func TestModesUnderUmask(t *testing.T) {
	for _, tc := range []struct {
		umask          int
		shared, secret os.FileMode
		dir            os.FileMode
	}{
		{0o022, 0o644, 0o600, 0o755},
		{0o077, 0o600, 0o600, 0o700},
		{0o002, 0o664, 0o600, 0o775},
	} {
		t.Run(os.FileMode(tc.umask).String(), func(t *testing.T) {
			withUmask(t, tc.umask)
			run := filepath.Join(t.TempDir(), "CAMPAIGN", "RUN")
			want := map[string]os.FileMode{
				"report/index.html":                 tc.shared,
				"report/verdict.md":                 tc.shared,
				"a/round-1/" + RequestsFile:         tc.shared,
				"a/round-1/" + LevelsFile:           tc.shared,
				"a/round-1/" + MetricsDir + "/x":    tc.shared,
				"a/round-1/" + PowerFile:            tc.shared,
				ManifestFile:                        tc.secret,
				SummaryFile:                         tc.secret,
				"a/round-1/" + ResultFile:           tc.secret,
				"a/round-1/history/1/" + ResultFile: tc.secret,
			}
			for rel := range want {
				if err := WriteFileAtomic(filepath.Join(run, filepath.FromSlash(rel)), []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			// A download arrives user-only, as the host's umask 077 made it.
			for rel, mode := range map[string]os.FileMode{"a/round-1/" + ServerLog: tc.secret, "a/round-1/" + PowerLogFile: tc.shared} {
				path := filepath.Join(run, filepath.FromSlash(rel))
				if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := SetMode(path); err != nil {
					t.Fatal(err)
				}
				want[rel] = mode
			}
			for rel, mode := range want {
				fi, err := os.Stat(filepath.Join(run, filepath.FromSlash(rel)))
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != mode {
					t.Errorf("%s: mode %v, want %v", rel, got, mode)
				}
			}
			for _, rel := range []string{"", "report", "a", "a/round-1", "a/round-1/" + MetricsDir} {
				fi, err := os.Stat(filepath.Join(run, filepath.FromSlash(rel)))
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != tc.dir {
					t.Errorf("directory %q: mode %v, want %v", rel, got, tc.dir)
				}
			}
			// The probe that read the umask is gone.
			left, _ := filepath.Glob(filepath.Join(run, "a", "round-1", ".*"))
			if len(left) > 0 {
				t.Errorf("files left behind: %v", left)
			}
		})
	}
}
