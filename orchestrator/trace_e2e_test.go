package orchestrator_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// traceSpeeds are the levels of the trace campaign: a pace both servers
// keep up with, the recorded one, and one the single-slot server cannot.
var traceSpeeds = []float64{0.5, 1, 8}

// writeTrace writes a Mooncake-form trace of convs conversations of turns
// turns each, interleaved gapMs apart: turn k of a conversation names the
// hash ids of turn k−1 and one more, so rows share prefixes as a chat
// service's do.
func writeTrace(t *testing.T, path string, convs, turns, block, gapMs, out int) {
	t.Helper()
	var b strings.Builder
	chains := make([][]string, convs)
	next, row := 0, 0
	for k := range turns {
		for c := range convs {
			next++
			chains[c] = append(chains[c], fmt.Sprint(next))
			in := (len(chains[c])-1)*block + block/2 + k
			fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n",
				gapMs*row, in, out, strings.Join(chains[c], ", "))
			row++
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// traceCampaign writes a campaign that replays a trace of shared prefixes
// at traceSpeeds against two sims with a token-by-token prefix cache: one
// with 64 running slots and one with a single slot, under an objective on
// time to first token, with the GPU power read.
func (w *world) traceCampaign(out string) {
	w.t.Helper()
	w.scenario("wide", "", "sim-prefix-cache: true", "page-size: 1", "enable-cache-report: true")
	w.scenario("narrow", "wide", "max-running-requests: 1")
	// 48 rows: the saturation rule asks a rank correlation of latency with
	// send time more than three standard errors from none over the rows
	// after the first quarter, 0.73 of 18 rows from 24, which a loaded
	// machine's late sends blurred below it; 0.51 of 36 rows.
	writeTrace(w.t, filepath.Join(w.root, "configs", "trace.jsonl"), 8, 6, 16, 40, 24)
	speeds := make([]string, len(traceSpeeds))
	for i, s := range traceSpeeds {
		speeds[i] = fmt.Sprint(s)
	}
	body := fmt.Sprintf(`power:
  interval: 100ms
sweep:
  speeds: [%s]
  trace:
    file: trace.jsonl
    block_size: 16
  endpoint: completions
  ignore_eos: true
  warmup: 1
slo:
  ttft_p99: 250ms
baseline: wide
scenarios: [wide, narrow]
rounds: 1
`, strings.Join(speeds, ", "))
	w.simCampaign(out, 20, body)
}

// TestTraceCampaign replays a trace of shared prefixes through a whole
// campaign against the sim at three speeds: both scenarios receive the same
// schedule, the cache finds the trace's prefixes, and the single-slot
// server's fastest speed is saturated in levels.json and the verdict, and
// never compared. Everything downstream works on speed levels: the SLO
// capacity in multiples of the trace's pace, goodput, the energy per level,
// the report in text, Markdown, HTML and CSV with its plots, and `bakeoff
// diff` between two runs of the campaign.
func TestTraceCampaign(t *testing.T) {
	w := newWorld(t)
	w.traceCampaign("trace")
	levels := make([]measure.Level, len(traceSpeeds))
	for i, s := range traceSpeeds {
		levels[i] = measure.SpeedLevel(s)
	}
	top := levels[len(levels)-1]
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 0 {
		t.Fatalf("failed: %+v", out.Results)
	}
	run := readSummary(t, out.RunDir)
	if got := run.Manifest.Sweep.Speeds; !slices.Equal(got, traceSpeeds) {
		t.Errorf("manifest sweep speeds %v", got)
	}
	schedules := map[string][]int64{}
	for _, n := range []string{"wide", "narrow"} {
		s := scenarioResult(t, run, n)
		if s.Status != results.StatusOK || len(s.Levels) != len(levels) {
			t.Fatalf("%s: %s, levels %+v", n, s.Status, s.Levels)
		}
		for i, l := range s.Levels {
			if l.Level != levels[i] {
				t.Fatalf("%s: level %d is %s, want %s", n, i, l.Level, levels[i])
			}
			t.Logf("%s %s: saturated %v (%s), late p99 %.1f ms, TTFT p99 %.1f ms, %.0f J/1k tok", n, l.Level, l.Saturated, l.Saturation,
				l.LateP99*1e3, l.TTFTP99*1e3, l.JoulesPerKTok)
		}
		if s.Levels[0].Saturated {
			t.Errorf("%s saturated at %s: %s", n, levels[0], s.Levels[0].Saturation)
		}
		recs, err := run.Records(n)
		if err != nil {
			t.Fatal(err)
		}
		cached := 0
		for _, r := range recs {
			if r.Warmup {
				continue
			}
			if !measure.IsSpeed(r.Level) || !r.OK() {
				t.Fatalf("%s: record %+v", n, r)
			}
			if r.CachedTokens != nil {
				cached += *r.CachedTokens
			}
		}
		if cached == 0 {
			t.Errorf("%s: no prompt token served from the cache", n)
		}
		schedules[n] = dueOffsets(recs, top)
	}
	if !slices.Equal(schedules["wide"], schedules["narrow"]) {
		t.Errorf("the two scenarios got different schedules at %s", top)
	}
	narrow := scenarioResult(t, run, "narrow")
	if !narrow.Levels[len(levels)-1].Saturated {
		t.Errorf("narrow at %s, beyond its one slot, not saturated: %s", top, narrow.Levels[len(levels)-1].Saturation)
	}

	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Levels, levels) {
		t.Fatalf("verdict levels %v", v.Levels)
	}
	if cell := v.Cell(top, "narrow"); cell == nil || !cell.Saturated || cell.Compared {
		t.Errorf("narrow at %s: %+v, want saturated and not compared", top, cell)
	}
	if cell := v.Cell(levels[0], "narrow"); cell == nil || !cell.Compared {
		t.Errorf("narrow at %s: %+v, want compared", levels[0], cell)
	}
	checkTraceVerdict(t, v, top)
	for _, n := range v.Notes {
		if n.Severity == verdict.SeverityRed || n.Check == verdict.CheckTokens && n.Severity != verdict.SeverityInfo {
			t.Errorf("note: %s", n.Text)
		}
	}

	var text bytes.Buffer
	if err := report.Text(&text, v); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"speed", "8×", "saturated", "× the trace's pace"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report does not say %q:\n%s", want, text.String())
		}
	}
	checkReportFiles(t, out.RunDir, v)

	// A second run of the same campaign, compared with the first.
	w.traceCampaign("trace")
	second := filepath.Join(w.root, "run2")
	if b, err := w.bakeoff("run", w.config, "--out", second).CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, b)
	}
	diff, err := w.bakeoff("diff", out.RunDir, second).CombinedOutput()
	t.Logf("bakeoff diff:\n%s", diff)
	if err != nil && !strings.Contains(string(diff), "REGRESSED") {
		t.Fatalf("bakeoff diff: %v", err)
	}
	for _, want := range []string{"speed", "0.5×", "1×", "Capacity under the SLO"} {
		if !strings.Contains(string(diff), want) {
			t.Errorf("bakeoff diff does not show %q", want)
		}
	}
	// Saturated in the first run; the second, on a loaded machine, may
	// just keep up: either way the diff says so and compares nothing there.
	if !regexp.MustCompile(`narrow speed 8×: saturated in (both runs|OLD|NEW) \(not compared\)`).Match(diff) {
		t.Errorf("bakeoff diff does not say narrow's fastest speed was saturated and not compared")
	}
	d, err := rundiff.Compare(run, readSummary(t, second), rundiff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Rows {
		if r.Scenario == "narrow" && r.Level == top {
			t.Errorf("the diff compares narrow's saturated %s: %+v", top, r)
		}
	}
	// Every level of both but narrow's fastest; on a loaded machine wide
	// may not keep up at 8× either, in one run or both, and is then left
	// out the same way.
	if n := len(d.Rows); n < 2*len(levels)-2 || n > 2*len(levels)-1 || d.Capacity == nil || len(d.Capacity.Rows) != 2 {
		t.Errorf("diff: %d rows, capacity %+v", len(d.Rows), d.Capacity)
	}
}

// checkTraceVerdict checks what the verdict says of a trace replay beyond
// throughput: the capacity under the objective in multiples of the trace's
// pace, each level's goodput, the energy per level, and categories, which a
// hash-id trace has none of.
func checkTraceVerdict(t *testing.T, v *verdict.Verdict, top measure.Level) {
	t.Helper()
	c := v.Capacity
	if c == nil || c.Unit != "× the trace's pace" || len(c.Scenarios) != 2 {
		t.Fatalf("capacity %+v", c)
	}
	for _, s := range c.Scenarios {
		t.Logf("capacity %s: %s", s.Scenario, s.Text)
	}
	if nc := c.Scenarios[1]; nc.Scenario != "narrow" || nc.Bound != "" || nc.Capacity.Center >= top.Speed {
		t.Errorf("narrow's capacity %+v: want an exact one below %s", nc, top)
	}
	if len(c.Comparisons) != 1 || c.Comparisons[0].Sentence == "" {
		t.Errorf("capacity comparisons %+v", c.Comparisons)
	}
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.SLO == nil || len(l.SLO.Launches) != 1 {
				t.Errorf("%s %s: SLO %+v", s.Name, l.Level, l.SLO)
				continue
			}
			if !l.Saturated && l.SLO.Goodput <= 0 {
				t.Errorf("%s %s: goodput %g", s.Name, l.Level, l.SLO.Goodput)
			}
			if l.Saturated && l.SLO.Meets != 0 {
				t.Errorf("%s %s: saturated yet meets the objective", s.Name, l.Level)
			}
			if !l.Saturated && (l.Energy == nil || l.Energy.JoulesPerKTok.Center <= 0) {
				t.Errorf("%s %s: energy %+v", s.Name, l.Level, l.Energy)
			}
			if len(l.Categories) > 1 {
				t.Errorf("%s %s: categories %+v from a trace that has none", s.Name, l.Level, l.Categories)
			}
		}
	}
}

// checkReportFiles writes the run's report files as `bakeoff run` and
// `bakeoff report` do, and checks each shows the speed levels.
func checkReportFiles(t *testing.T, dir string, v *verdict.Verdict) {
	t.Helper()
	if err := report.WriteAll(dir, v); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ name, want string }{
		{report.JSONFile, `"levels": [`},
		{report.MarkdownFile, "8×"},
		{report.HTMLFile, "8×"},
		{report.CSVFile, "narrow,8,"},
	} {
		data, err := os.ReadFile(filepath.Join(dir, report.Dir, f.name))
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		if !strings.Contains(string(data), f.want) {
			t.Errorf("%s does not show %q", f.name, f.want)
		}
	}
	plots, _ := filepath.Glob(filepath.Join(dir, report.Dir, "*.svg"))
	if len(plots) == 0 {
		t.Errorf("no plots in %s", filepath.Join(dir, report.Dir))
	}
}
