package orchestrator_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
)

// demoWithSessions is configs/demo.yaml with its commented session example
// uncommented, cut to a short campaign for this world: one level, one
// round, the baseline and the baseline with the sim's prefix cache.
func demoWithSessions(t *testing.T, w *world) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "configs", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	found := false
	for i := 0; i < len(lines); i++ {
		if lines[i] != "  # workload:" {
			continue
		}
		found = true
		for ; i < len(lines) && strings.HasPrefix(lines[i], "  # "); i++ {
			lines[i] = "  " + strings.TrimPrefix(lines[i], "  # ")
		}
	}
	if !found {
		t.Fatal("configs/demo.yaml has no commented `workload:` example")
	}
	cfg := strings.Join(lines, "\n")
	for _, r := range []struct{ old, new string }{
		// A slower sim, so that a prefill shows above this machine's
		// scheduling noise.
		{`"--sim-speed", "40"`, `"--sim-speed", "10"`},
		{"port: 30000", fmt.Sprintf("port: %d", w.port)},
		{"concurrency: [1, 2, 5, 10, 30, 70]", "concurrency: [3]"},
		{"requests: auto", "requests: 18"},
		{"max_tokens: 200", "max_tokens: 48"},
		{"scenarios: [baseline, baseline-nofusion, eagle3-topk4, eagle3-topk1-specv2]", "scenarios: [baseline, cached]"},
		{"rounds: {min: 3, max: 8}", "rounds: 1"},
	} {
		if !strings.Contains(cfg, r.old) {
			t.Fatalf("configs/demo.yaml no longer holds %q", r.old)
		}
		cfg = strings.Replace(cfg, r.old, r.new, 1)
	}
	base, err := os.ReadFile(filepath.Join("..", "scenarios", "baseline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// TP 8 would start eight scheduler processes per server; two do.
	base = bytes.Replace(base, []byte("tp-size: 8"), []byte("tp-size: 2"), 1)
	for name, body := range map[string][]byte{
		"baseline": base,
		"cached":   []byte("extends: baseline\nargs:\n  sim-prefix-cache: true\n  enable-cache-report: true\n"),
	} {
		if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.config = filepath.Join(w.root, "configs", "demo.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return w.config
}

// TestDemoSessions runs the demo's session example against the sim, with
// and without its prefix cache, through `bakeoff run` (the sweep on the
// host, so through its command line): both scenarios receive the same
// sessions on the same schedule, every record names its session and turn,
// and with the cache the later turns' time to first token falls, below the
// first turn's and below the same turns' without the cache.
func TestDemoSessions(t *testing.T) {
	w := newWorld(t)
	demoWithSessions(t, w)
	dir := filepath.Join(w.root, "run")
	out, err := w.bakeoff("run", w.config, "--out", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	run := readSummary(t, dir)
	schedules := map[string]string{}
	byTurn := map[string]map[int]measure.TurnSummary{}
	for _, name := range []string{"baseline", "cached"} {
		if s := scenarioResult(t, run, name); s.Status != results.StatusOK {
			t.Fatalf("%s: %s %s\n%s", name, s.Status, s.Reason, out)
		}
		recs, err := run.Records(name)
		if err != nil {
			t.Fatal(err)
		}
		var sched []string
		var measured []measure.Record
		for _, r := range recs {
			if r.Warmup {
				continue
			}
			if r.Session == "" || r.Turn < 1 || !r.OK() {
				t.Fatalf("%s: record %+v", name, r)
			}
			measured = append(measured, r)
			sched = append(sched, fmt.Sprintf("%s/%d seq %d think %d prompt %d max %d", r.Session, r.Turn, r.Seq, r.ThinkNs, r.Prompt, r.MaxTokens))
		}
		if len(measured) < 18 {
			t.Fatalf("%s: %d requests, want at least 18", name, len(measured))
		}
		slices.Sort(sched)
		schedules[name] = strings.Join(sched, "\n")
		sum := measure.SessionsOf(measured)
		if sum == nil || sum.Completed != sum.Sessions || len(sum.ByTurn) < 2 {
			t.Fatalf("%s: sessions %+v", name, sum)
		}
		byTurn[name] = map[int]measure.TurnSummary{}
		for _, ts := range sum.ByTurn {
			byTurn[name][ts.Turn] = ts
			cachedShare := "none reported"
			if ts.CachedShare != nil {
				cachedShare = fmt.Sprintf("%.0f%%", *ts.CachedShare*100)
			}
			t.Logf("%s turn %d: %d requests, TTFT p50 %.2f ms, prompt %.0f tokens, cached %s",
				name, ts.Turn, ts.Requests, ts.TTFT.P50*1e3, ts.PromptTokensMean, cachedShare)
		}
	}
	if text := w.detail(dir); !strings.Contains(text, "TTFT p50 by turn 1: ") || !strings.Contains(text, "% cached)") {
		t.Errorf("the run's report shows no TTFT by turn:\n%s", text)
	}
	f, err := os.Open(filepath.Join(dir, report.Dir, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := report.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if l := v.Scenario("cached").Level(measure.ConcurrencyLevel(3)); l == nil || l.Sessions == nil || len(l.Sessions.ByTurn) < 2 {
		t.Errorf("verdict.json: cached C=3 has no sessions: %+v", l)
	}
	if schedules["baseline"] != schedules["cached"] {
		t.Errorf("the two scenarios received different sessions:\n%s\n\n%s", schedules["baseline"], schedules["cached"])
	}
	cached, plain := byTurn["cached"], byTurn["baseline"]
	if s := cached[2].CachedShare; s == nil || *s < 0.5 {
		t.Errorf("cached turn 2: cached share %v, want most of the prompt", s)
	}
	if plain[2].CachedShare != nil && *plain[2].CachedShare > 0 {
		t.Errorf("baseline turn 2 reports cached tokens without a cache: %v", *plain[2].CachedShare)
	}
	if c2, c1, p2 := cached[2].TTFT.P50, cached[1].TTFT.P50, plain[2].TTFT.P50; !(c2 < 0.7*c1 && c2 < 0.7*p2) {
		t.Errorf("turn 2's TTFT p50 with the cache %.2f ms, not well below turn 1's %.2f ms and the uncached turn 2's %.2f ms",
			c2*1e3, c1*1e3, p2*1e3)
	}
}
