package results

import (
	"path/filepath"
	"testing"
)

// TestNewestCompleteAttempt: the figures of a scenario come from its newest
// attempt that completed, whether the summary lists the earlier attempts
// (as written now) or only the newest one, with the earlier ones' result.json
// under history/ (as written before attempts were tracked).
func TestNewestCompleteAttempt(t *testing.T) {
	ok1 := ScenarioResult{Name: "b", Status: StatusOK, Attempt: 1}
	failed2 := ScenarioResult{Name: "b", Status: StatusFailed, Attempt: 2, FailedPhase: "smoke", Reason: "crashed"}
	pending3 := ScenarioResult{Name: "b", Status: StatusPending, Attempt: 3}
	withDir := func(r ScenarioResult, dir string) ScenarioResult { r.Dir = dir; return r }
	withHistory := func(r ScenarioResult, h ...ScenarioResult) ScenarioResult { r.History = h; return r }
	for _, tc := range []struct {
		name string
		// newest is summary.json's entry; onDisk are result.json files
		// under b/history/N/, by N.
		newest  ScenarioResult
		onDisk  map[int]ScenarioResult
		want    int    // attempt of Complete(), 0 for none
		wantDir string // ScenarioDir, relative
	}{
		{"newest ok", withDir(ok1, "b"), nil, 1, "b"},
		{"rerun failed", withHistory(withDir(failed2, "b"), withDir(ok1, "b/history/1")), nil, 1, "b/history/1"},
		{"rerun failed, then interrupted", withHistory(withDir(pending3, "b"),
			withDir(ok1, "b/history/1"), withDir(failed2, "b/history/2")), nil, 1, "b/history/1"},
		{"nothing complete", withHistory(withDir(failed2, "b"), withDir(pending3, "b/history/1")), nil, 0, "b"},
		{"older summary, rerun failed", failed2, map[int]ScenarioResult{1: ok1}, 1, "b/history/1"},
		{"older summary, two complete", pending3, map[int]ScenarioResult{1: ok1, 2: {Name: "b", Status: StatusOK, Attempt: 2}},
			2, "b/history/2"},
		{"older summary, no history", failed2, nil, 0, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteJSONAtomic(filepath.Join(dir, ManifestFile), Manifest{Campaign: "c", Scenarios: []string{"b"}}); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSONAtomic(filepath.Join(dir, SummaryFile), Summary{Campaign: "c",
				Scenarios: []ScenarioResult{tc.newest}}); err != nil {
				t.Fatal(err)
			}
			for n, r := range tc.onDisk {
				if err := WriteJSONAtomic(filepath.Join(dir, filepath.FromSlash(HistoryDirOf("b", n)), ResultFile), r); err != nil {
					t.Fatal(err)
				}
			}
			run, err := ReadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			newest := run.Result("b")
			if newest == nil || newest.Attempt != tc.newest.Attempt {
				t.Fatalf("newest attempt: %+v, want %d", newest, tc.newest.Attempt)
			}
			got := 0
			if c := newest.Complete(); c != nil {
				got = c.Attempt
			}
			if got != tc.want {
				t.Errorf("newest complete attempt %d, want %d", got, tc.want)
			}
			if d := run.ScenarioDir("b"); d != filepath.Join(dir, filepath.FromSlash(tc.wantDir)) {
				t.Errorf("ScenarioDir %s, want %s", d, tc.wantDir)
			}
		})
	}
}
