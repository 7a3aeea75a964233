package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestPlotsEdgeCases: a run with one level, one with a lone scenario, one
// where every scenario failed, and runs with interrupted scenarios or levels
// where nothing succeeded still give every plot, without a panic; a scenario
// with nothing to plot is named in the legend with the reason.
func TestPlotsEdgeCases(t *testing.T) {
	one := verdicttest.DefaultSweep()
	one.Concurrency = []int{4}
	// Every request failed: levels whose throughput and latency are zero.
	allFailed := verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 3)
	for i := range allFailed {
		allFailed[i].Status, allFailed[i].ErrClass, allFailed[i].Error = 500, measure.ErrHTTP, "overloaded"
		allFailed[i].Tokens, allFailed[i].FirstNs = 0, 0
	}
	// A record of level 0 that is not marked warm-up: a log axis cannot show it.
	levelZero := verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 4)
	for i := range levelZero {
		levelZero[i].Level, levelZero[i].Warmup = measure.ConcurrencyLevel(0), false
	}
	for _, tc := range []struct {
		name      string
		scenarios []verdicttest.Scenario
		// legend holds text each SVG plot must contain.
		legend []string
	}{
		{"one level", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Records: verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 2)}}, nil},
		{"baseline alone", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Status: results.StatusFailed, Reason: "died"}},
			[]string{"variant: not plotted (failed)"}},
		{"everything failed", []verdicttest.Scenario{
			{Name: "baseline", Status: results.StatusFailed, Reason: "died"},
			{Name: "variant", Status: results.StatusFailed, Reason: "died"}}, nil},
		{"interrupted before any level", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Status: results.StatusPending}},
			[]string{"variant: not plotted (not finished)"}},
		{"every request failed", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Records: allFailed}},
			[]string{"variant: not plotted"}},
		{"level zero", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Status: results.StatusPending, Records: levelZero}},
			[]string{"variant: not plotted (not finished)"}},
		{"baseline interrupted", []verdicttest.Scenario{
			{Name: "baseline", Status: results.StatusPending},
			{Name: "variant", Records: verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 2)}},
			[]string{"baseline: not plotted (not finished)"}},
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
			for _, name := range []string{PlotThroughput, PlotLatencyP99} {
				svg, err := os.ReadFile(filepath.Join(run.Dir, Dir, name+".svg"))
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range tc.legend {
					if !bytes.Contains(svg, []byte(want)) {
						t.Errorf("%s.svg does not say %q", name, want)
					}
				}
			}
		})
	}
}
