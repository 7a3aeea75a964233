package orchestrator_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// TestVerdictMetricsThroughThePath: a campaign that asks for TTFT p50 and
// per-user speed beside throughput writes them to the run's manifest, and
// the verdict read back from the run decides each per level against the
// baseline, twice as slow a sim per step being worse in both, and the last
// screen shows each table.
func TestVerdictMetricsThroughThePath(t *testing.T) {
	w := newWorld(t)
	w.scenario("base", "", "sim-load-time: 5s")
	w.scenario("slow", "base", "sim-slowdown: 2")
	// Long prompts at a low speed: the TTFT is then mostly the sim's
	// prefill (about 75 ms at C=1, twice that slowed), not the HTTP path
	// and the scheduler's few ms, which a busy machine can turn either way.
	w.writeConfig(campaignOpts{scenarios: []string{"base", "slow"}, rounds: 2, requests: 16, concurrency: "[1, 4]", speed: 5,
		sweepExtra: "  prompts:\n    synthetic:\n      count: 16\n      input_tokens: 1500\n      output_tokens: 8\n",
		extra:      "verdict:\n  metrics: [ttft_p50, user_tps]\n"})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 0 {
		t.Fatalf("failed: %+v", out.Results)
	}
	run := readSummary(t, out.RunDir)
	want := []results.VerdictMetric{{Name: "ttft_p50", MarginPct: 5}, {Name: "user_tps"}}
	if got := run.Manifest.VerdictMetrics; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("manifest verdict_metrics %+v, want %+v", got, want)
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"ttft_p50", "user_tps"} {
		mv := v.Metric(m)
		if mv == nil || len(mv.Rows) != 2 {
			t.Fatalf("%s: %+v, want two levels decided", m, mv)
		}
		for _, row := range mv.Rows {
			c := mv.Cell(row.Level, "slow")
			if c == nil || !c.Compared || c.Rounds != 2 {
				t.Fatalf("%s at %v: %+v, want slow compared over two rounds", m, row.Level, c)
			}
			// Two rounds give few df: worse, or undecided on the worse side.
			if c.Outcome == verdict.OutcomeBetter || (m == "ttft_p50") != (c.Speedup > 1) {
				t.Errorf("%s at %v: %s, ratio %.3f; want the slow sim worse", m, row.Level, c.Outcome, c.Speedup)
			}
		}
	}
	var end bytes.Buffer
	if err := report.End(&end, v, 120, report.Where{}); err != nil {
		t.Fatal(err)
	}
	for _, heading := range []string{"TTFT p50 in ms, lower is better", "per-user speed in tok/s, higher is better"} {
		if !strings.Contains(end.String(), heading) {
			t.Errorf("the last screen lacks %q:\n%s", heading, end.String())
		}
	}
}
