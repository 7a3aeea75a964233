package report

import (
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestPlotsEdgeCases: a run with one level, one with a lone scenario and
// one where every scenario failed still give every plot, without a panic.
func TestPlotsEdgeCases(t *testing.T) {
	one := verdicttest.DefaultSweep()
	one.Concurrency = []int{4}
	for _, tc := range []struct {
		name      string
		scenarios []verdicttest.Scenario
	}{
		{"one level", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Records: verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 2)}}},
		{"baseline alone", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Status: results.StatusFailed, Reason: "died"}}},
		{"everything failed", []verdicttest.Scenario{
			{Name: "baseline", Status: results.StatusFailed, Reason: "died"},
			{Name: "variant", Status: results.StatusFailed, Reason: "died"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := verdicttest.Manifest("edge", "r", "sha256:ee", "baseline", one, "baseline", "variant")
			run, err := verdicttest.WriteRun(filepath.Join(dir, "run"), m, tc.scenarios)
			if err != nil {
				t.Fatal(err)
			}
			v, err := verdict.Compute(run, verdict.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteAll(run.Dir, v); err != nil {
				t.Fatal(err)
			}
		})
	}
}
