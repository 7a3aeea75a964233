package orchestrator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// launchList names results as "scenario/round".
func launchList(rs []results.ScenarioResult) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s/%d", r.Name, r.Round))
	}
	return out
}

// TestRounds: every round launches every scenario once, in the manifest's
// counterbalanced order, each launch in its own folder with its own result;
// --only reruns a scenario in every round, --only with --round one launch,
// and a resume with more rounds adds them while keeping those already run.
func TestRounds(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.scenario("b", "a", "cuda-graph-max-bs: 64")
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, rounds: 3})
	var starts []orchestrator.Event
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{Events: func(e orchestrator.Event) {
		if e.Kind == orchestrator.EventScenarioStart {
			starts = append(starts, e)
		}
	}})
	if err != nil || out.Failed > 0 {
		t.Fatalf("run: %v, %+v", err, out)
	}
	dir := out.RunDir
	want := []string{"a/1", "b/1", "b/2", "a/2", "a/3", "b/3"}
	if got := launchList(out.Results); !reflect.DeepEqual(got, want) {
		t.Fatalf("launched %v, want %v", got, want)
	}
	for i, e := range starts {
		if e.Index != i+1 || e.Total != 6 || e.Rounds != 3 || fmt.Sprintf("%s/%d", e.Scenario, e.Round) != want[i] {
			t.Errorf("start event %d: %s round %d, %d/%d of %d rounds; want %s, %d/6 of 3", i, e.Scenario, e.Round,
				e.Index, e.Total, e.Rounds, want[i], i+1)
		}
	}
	run := readSummary(t, dir)
	m := run.Manifest
	if m.Rounds != 3 || !reflect.DeepEqual(m.Order, [][]string{{"a", "b"}, {"b", "a"}, {"a", "b"}}) ||
		m.MinEffectPct == 0 || m.EquivalenceMarginPct == 0 {
		t.Errorf("manifest: rounds %d, order %v, min effect %g%%, margin %g%%", m.Rounds, m.Order, m.MinEffectPct,
			m.EquivalenceMarginPct)
	}
	if len(run.Summary.Scenarios) != 6 {
		t.Errorf("summary holds %d launches, want 6", len(run.Summary.Scenarios))
	}
	wantOrder := map[string][]int{"a": {0, 3, 4}, "b": {1, 2, 5}}
	for name, orders := range wantOrder {
		ls := run.Launches(name)
		if len(ls) != 3 {
			t.Fatalf("%s: %d launches, want 3", name, len(ls))
		}
		for k, l := range ls {
			if l.Round != k+1 || l.Order != orders[k] || l.Dir != fmt.Sprintf("%s/round-%d", name, k+1) ||
				l.Result.Status != results.StatusOK {
				t.Errorf("%s round %d: %+v, want order %d in %s/round-%d", name, k+1, l, orders[k], name, k+1)
			}
			for _, f := range []string{results.RequestsFile, results.LevelsFile, results.ServerLog, results.ResultFile} {
				if fi, err := os.Stat(filepath.Join(dir, l.Dir, f)); err != nil || fi.Size() == 0 {
					t.Errorf("%s/%s: missing or empty (%v)", l.Dir, f, err)
				}
			}
			if recs, err := run.LaunchRecords(l); err != nil || len(recs) != 1+2*8 {
				t.Errorf("%s: %d records (%v), want warm-up 1 + 2 levels × 8", l.Dir, len(recs), err)
			}
			// The server learns which launch it is (the sim seeds its launch
			// noise with it).
			env := fmt.Sprintf("BAKEOFF_LAUNCH=%d BAKEOFF_ROUND=%d ", orders[k], k+1)
			if !strings.Contains(l.Result.Launch, env) {
				t.Errorf("%s: launch %q lacks %q", l.Dir, l.Result.Launch, env)
			}
		}
	}
	entries := journal(t, dir)
	ends := map[string]int{}
	for _, e := range entries {
		if e.Phase == orchestrator.PhaseScenario && e.Event == "end" && e.Outcome == orchestrator.OutcomeOK {
			ends[fmt.Sprintf("%s/%d", e.Scenario, e.Round)]++
		}
		if e.Scenario != "" && e.Round == 0 {
			t.Errorf("journal entry without a round: %+v", e)
		}
	}
	for _, l := range want {
		if ends[l] != 1 {
			t.Errorf("%s ended ok %d times in the journal, want once", l, ends[l])
		}
	}

	// One launch again: b in round 2.
	before := fileHash(t, filepath.Join(dir, "b", "round-2", results.RequestsFile))
	out, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: dir, Only: []string{"b"}, Round: 2})
	if err != nil || out.Failed > 0 {
		t.Fatalf("rerun of b round 2: %v, %+v", err, out)
	}
	if got := launchList(out.Results); !reflect.DeepEqual(got, []string{"b/2"}) {
		t.Errorf("--only b --round 2 ran %v", got)
	}
	if fileHash(t, filepath.Join(dir, "b", "round-2", "history", "1", results.RequestsFile)) != before {
		t.Errorf("b's first attempt in round 2 was not kept in b/round-2/history/1")
	}
	run = readSummary(t, dir)
	for _, l := range run.Launches("b") {
		if wantAttempt := map[int]int{1: 1, 2: 2, 3: 1}[l.Round]; l.Result.Attempt != wantAttempt {
			t.Errorf("b round %d: attempt %d, want %d", l.Round, l.Result.Attempt, wantAttempt)
		}
	}

	// A scenario again in every round.
	out, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: dir, Only: []string{"a"}})
	if err != nil || out.Failed > 0 {
		t.Fatalf("rerun of a: %v, %+v", err, out)
	}
	if got := launchList(out.Results); !reflect.DeepEqual(got, []string{"a/1", "a/2", "a/3"}) {
		t.Errorf("--only a ran %v", got)
	}

	// Fewer rounds would orphan the third; more rounds add to the run.
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, rounds: 2})
	if _, _, err := w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: dir}); err == nil ||
		!strings.Contains(err.Error(), "it has 3 rounds and the campaign now asks for 2") {
		t.Errorf("resume with fewer rounds: %v, want a refusal", err)
	}
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, rounds: 4})
	out, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: dir})
	if err != nil || out.Failed > 0 {
		t.Fatalf("resume with 4 rounds: %v, %+v", err, out)
	}
	if got := launchList(out.Results); !reflect.DeepEqual(got, []string{"b/4", "a/4"}) {
		t.Errorf("adding a round ran %v, want b/4 a/4", got)
	}
	run = readSummary(t, dir)
	if run.Manifest.Rounds != 4 || len(run.Manifest.Order) != 4 || len(run.Summary.Scenarios) != 8 {
		t.Errorf("after adding a round: manifest rounds %d, order %v, %d launches in the summary",
			run.Manifest.Rounds, run.Manifest.Order, len(run.Summary.Scenarios))
	}
	w.scenario("c", "a")
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b", "c"}, rounds: 4})
	if _, _, err := w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: dir}); err == nil ||
		!strings.Contains(err.Error(), "the launch order of the rounds already run would change") {
		t.Errorf("resume with another scenario: %v, want a refusal", err)
	}
	w.checkNoLeftovers()
}

// TestRoundsResumeMidRound: a campaign stopped in the middle of round 2
// resumes there: the launches already done are skipped, the interrupted one
// runs again (its partial files kept in its history) and the rest follow.
func TestRoundsResumeMidRound(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.scenario("b", "a", "cuda-graph-max-bs: 64")
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, rounds: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, _, err := w.runInProcess(ctx, orchestrator.Options{Events: func(e orchestrator.Event) {
		// Round 2 starts with b (the order is reversed): stop in its sweep.
		if e.Kind == orchestrator.EventPhaseStart && e.Phase == "sweep" && e.Scenario == "b" && e.Round == 2 {
			cancel()
		}
	}})
	if err != nil || !out.Canceled {
		t.Fatalf("first run: %v, %+v; want it canceled", err, out)
	}
	if got := launchList(out.Results); !reflect.DeepEqual(got, []string{"a/1", "b/1", "b/2"}) {
		t.Fatalf("first run launched %v", got)
	}
	dir := out.RunDir
	out, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: dir})
	if err != nil || out.Failed > 0 || out.Canceled {
		t.Fatalf("resume: %v, %+v", err, out)
	}
	if got := launchList(out.Results); !reflect.DeepEqual(got, []string{"b/2", "a/2"}) {
		t.Errorf("resume launched %v, want b/2 a/2", got)
	}
	if want := []orchestrator.LaunchKey{{Scenario: "a", Round: 1}, {Scenario: "b", Round: 1}}; !reflect.DeepEqual(out.Skipped, want) {
		t.Errorf("resume skipped %v, want %v", out.Skipped, want)
	}
	run := readSummary(t, dir)
	b2 := run.Launches("b")[1]
	if b2.Result.Attempt != 2 || b2.Result.Status != results.StatusOK {
		t.Errorf("b round 2: %+v, want attempt 2 ok", b2.Result)
	}
	var hist []string
	for _, sr := range run.Summary.Scenarios {
		if sr.Name == "b" && sr.Round == 2 {
			for _, h := range sr.History {
				hist = append(hist, fmt.Sprintf("%d %s %s", h.Attempt, h.Status, h.Dir))
			}
		}
	}
	if want := []string{"1 pending b/round-2/history/1"}; !reflect.DeepEqual(hist, want) {
		t.Errorf("b round 2's history %q, want %q", hist, want)
	}
	for _, name := range []string{"a", "b"} {
		if ls := run.Launches(name); len(ls) != 2 || ls[0].Result.Status != results.StatusOK || ls[1].Result.Status != results.StatusOK {
			t.Errorf("%s: launches %+v, want two complete", name, ls)
		}
	}
	w.checkNoLeftovers()
}
