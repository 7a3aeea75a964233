package verdict

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestLevelFiguresAgreeWithLiveSummary pins one measurement model: on the
// same records, the verdict's level figures and the live sweep's summary
// (levels.json, the sweep lines) give the same steady-state throughput,
// wall throughput, achieved concurrency and percentiles.
func TestLevelFiguresAgreeWithLiveSummary(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 10, 70, 250}
	recs := map[string][]measure.Record{
		"baseline": verdicttest.Simulate(verdicttest.Baseline, s, 1),
		"eagle3":   verdicttest.Simulate(verdicttest.Eagle3TopK4, s, 2),
	}
	m := verdicttest.Manifest("c", "r", "sha256:ff", "baseline", s, "baseline", "eagle3")
	sum := results.Summary{Campaign: "c", Run: "r", Baseline: "baseline", Scenarios: []results.ScenarioResult{
		{Name: "baseline", Status: results.StatusOK, Attempt: 1}, {Name: "eagle3", Status: results.StatusOK, Attempt: 1}}}
	v, err := FromRecords(Input{Manifest: m, Summary: sum, Launches: oneLaunchEach(recs)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for name, rs := range recs {
		sc := v.Scenario(name)
		for _, c := range s.Concurrency {
			l := sc.Level(c)
			live := measure.Summarize(c, 0, rs)
			if l == nil {
				t.Fatalf("%s C=%d: no level", name, c)
			}
			for _, f := range []struct {
				what          string
				verdict, live float64
			}{
				{"steady throughput", l.SteadyThroughput, live.Throughput},
				{"wall throughput", l.WallThroughput, live.WallThroughput},
				{"achieved concurrency", l.AchievedConcurrency, live.AchievedConcurrency},
				{"steady seconds", l.SteadySeconds, float64(live.SteadyEndNs-live.SteadyStartNs) / 1e9},
				{"latency p50", l.Latency.P50, live.LatencyP50},
				{"latency p99", l.Latency.P99, live.LatencyP99},
				{"TTFT p99", l.TTFT.P99, live.TTFTP99},
				{"TPOT p99", l.TPOT.P99, live.TPOTP99},
			} {
				if !same(f.verdict, f.live) {
					t.Errorf("%s C=%d %s: verdict %.6f, live %.6f", name, c, f.what, f.verdict, f.live)
				}
			}
		}
	}
}
