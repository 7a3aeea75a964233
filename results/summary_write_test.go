package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// TestWriteSummaryAtomic: the summary written a launch at a time is byte for
// byte what marshalling it whole gives, for no scenarios, an empty list,
// and launches with levels, history and strings that JSON escapes; and a
// real run's summary reads back unchanged.
func TestWriteSummaryAtomic(t *testing.T) {
	accept := 2.47
	launch := func(name string, round int) ScenarioResult {
		return ScenarioResult{
			Name: name, Status: StatusFailed, Attempt: 2, HostName: "gpu-box", Fingerprint: "sha256:ab",
			Started: time.Date(2026, 12, 1, 3, 4, 5, 6, time.UTC), Ended: time.Date(2026, 12, 1, 3, 14, 5, 0, time.UTC),
			FailedPhase: "sweep", Reason: "server exited <during> the sweep & \"more\"", LogExcerpt: "line 1\n\tline 2 \u2028",
			Launch: "python -m sglang.launch_server --tp 8", AcceptLength: &accept, Round: round,
			Levels:       []measure.LevelSummary{{Level: measure.ConcurrencyLevel(1), Counts: measure.Counts{Requests: 30, OK: 30, Tokens: 6000}, Throughput: 3556.5}, {Level: measure.ConcurrencyLevel(70), Counts: measure.Counts{Requests: 280}}},
			PhaseSeconds: map[string]float64{"sweep": 8.25, "ready": 0.7},
			Dir:          LaunchDir(name, round),
			History:      []ScenarioResult{{Name: name, Status: StatusOK, Attempt: 1, Round: round}},
		}
	}
	base := Summary{Campaign: "demo", Run: "20261201T132031Z", Fingerprint: "sha256:5fe93", Baseline: "baseline",
		Updated: time.Date(2026, 12, 1, 13, 22, 0, 0, time.UTC)}
	full := base
	full.Scenarios = []ScenarioResult{launch("baseline", 1), launch("eagle3-topk4", 1), launch("baseline", 2)}
	empty := base
	empty.Scenarios = []ScenarioResult{}
	one := base
	one.Scenarios = []ScenarioResult{{Name: "a"}}

	var fromDisk Summary
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "pre-rounds-run", SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &fromDisk); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		s    Summary
	}{{"no scenarios", base}, {"empty list", empty}, {"one", one}, {"three launches", full}, {"a run's summary", fromDisk}} {
		t.Run(tt.name, func(t *testing.T) {
			whole := filepath.Join(dir, "whole.json")
			streamed := filepath.Join(dir, "streamed", SummaryFile)
			if err := WriteJSONAtomic(whole, &tt.s); err != nil {
				t.Fatal(err)
			}
			if err := WriteSummaryAtomic(streamed, &tt.s); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(whole)
			b, _ := os.ReadFile(streamed)
			if !bytes.Equal(a, b) {
				t.Errorf("streamed summary differs from the marshalled one:\n%s\nwant:\n%s", b, a)
			}
			// The summary holds each launch's command line, its environment
			// included: user-only.
			if fi, err := os.Stat(streamed); err != nil || fi.Mode().Perm() != SecretFileMode {
				t.Errorf("mode %v (%v), want %v", fi.Mode().Perm(), err, os.FileMode(SecretFileMode))
			}
		})
	}
}
