package verdict

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
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
	v, err := DecideRun(records.Input{Manifest: m, Summary: sum, Launches: verdicttest.OneLaunchEach(recs)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for name, rs := range recs {
		sc := v.Scenario(name)
		for _, c := range s.Concurrency {
			l := sc.Level(measure.ConcurrencyLevel(c))
			live := measure.Summarize(measure.ConcurrencyLevel(c), 0, rs)
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

// TestLiveLinesAgreeWithReport: a real sweep against a `bakeoff sim`, a
// closed loop and an open loop. Each level's figures as the sweep printed
// them live (its level summaries, which `bakeoff sweep` writes as its lines
// and levels.json) and as `bakeoff report` rebuilds them from the run
// directory's requests.jsonl are the same numbers, to the last bit, the
// client's dispatch lag included.
func TestLiveLinesAgreeWithReport(t *testing.T) {
	set, err := prompts.Load(prompts.Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	srv := startSim(t)
	for _, tt := range []struct {
		name  string
		o     loadgen.Options
		count int
	}{
		{"closed loop", loadgen.Options{Concurrency: []int{1, 6}, Requests: 18, Warmup: 3}, 2},
		{"open loop", loadgen.Options{Rates: []float64{4, 12.5}, Requests: 30}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.URL, o.MaxTokens, o.IgnoreEOS, o.Prompts = srv.url, e2eMaxTokens, true, set
			var recs []measure.Record
			o.Records = func(r measure.Record) error { recs = append(recs, r); return nil }
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			res, err := loadgen.Run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Levels) != tt.count {
				t.Fatalf("%d level summaries, want %d", len(res.Levels), tt.count)
			}
			s := verdicttest.DefaultSweep()
			s.Concurrency, s.MaxTokens, s.PromptSet = o.Concurrency, o.MaxTokens, recs[0].PromptSet
			m := verdicttest.Manifest("agree", "r", "sha256:agree", "baseline", s, "baseline")
			run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{{Name: "baseline", Records: recs}})
			if err != nil {
				t.Fatal(err)
			}
			v, err := decideDir(run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sc := v.Scenario("baseline")
			for _, live := range res.Levels {
				l := sc.Level(live.Level)
				if l == nil {
					t.Fatalf("%s: not in the report", measure.LevelName(live.Level))
				}
				t.Logf("live: %s", measure.FormatLevel(live))
				for _, f := range []struct {
					what          string
					live, rebuilt any
				}{
					{"requests", live.Requests, l.Requests},
					{"ok", live.OK, l.OK},
					{"failed", live.Failed, l.Failed},
					{"tokens", live.Tokens, l.Tokens},
					{"throughput", live.Throughput, l.SteadyThroughput},
					{"wall throughput", live.WallThroughput, l.WallThroughput},
					{"achieved concurrency", live.AchievedConcurrency, l.AchievedConcurrency},
					{"per-request tok/s", live.PerRequestTokS, l.PerRequest.Mean},
					{"latency mean", live.LatencyMean, l.Latency.Mean},
					{"latency p50", live.LatencyP50, l.Latency.P50},
					{"latency p99", live.LatencyP99, l.Latency.P99},
					{"TTFT p50", live.TTFTP50, l.TTFT.P50},
					{"TTFT p99", live.TTFTP99, l.TTFT.P99},
					{"TPOT p50", live.TPOTP50, l.TPOT.P50},
					{"TPOT p99", live.TPOTP99, l.TPOT.P99},
					{"dispatch lag p99", live.DispatchLagP99, l.DispatchLagP99},
				} {
					if f.live != f.rebuilt {
						t.Errorf("%s %s: live %v, report %v", measure.LevelName(live.Level), f.what, f.live, f.rebuilt)
					}
				}
				// The table's throughput is the geometric mean over launches:
				// exp(log x) for the one launch here.
				if c := l.Throughput.Center; math.Abs(c-live.Throughput) > 1e-12*live.Throughput {
					t.Errorf("%s table throughput %v, live %v", measure.LevelName(live.Level), c, live.Throughput)
				}
			}
		})
	}
}
