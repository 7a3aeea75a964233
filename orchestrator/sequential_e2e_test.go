package orchestrator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// TestSequentialCampaign runs a sequential campaign (`rounds: {min: 3,
// max: 8}`) with real sim processes through `bakeoff run`: a variant three
// times as slow stops before the maximum and is launched no more after its look,
// an A/A variant names no winner (judged at α = 0.001) and either stops
// tied or runs to the maximum, the baseline runs while any variant is
// open, the looks are journaled, and the report replays the same decisions.
func TestSequentialCampaign(t *testing.T) {
	w := newWorld(t)
	w.scenario("base", "")
	w.scenario("aa", "base")
	// Three times as slow, not twice: in one make test beside the rest of
	// the suite, a run's A/A MDE reached 49% after eight rounds (15% is
	// usual under the same load), a 2× slowdown (a log ratio of 0.69)
	// crossed the early looks' boundaries only at the last, and the test
	// could not show the stop before it. At 3× (1.10) the t statistic is
	// half as large again at every look.
	w.scenario("slow", "base", "sim-slowdown: 3")
	// Enough requests and levels that a round's difference is measured to a
	// few percent: with eight requests at two levels the pooled df after
	// three rounds leave even a 50% slowdown undecided by chance. The sim
	// at 20×, not the package's 200×: at 200× a level lasted tens of
	// milliseconds, the scheduler's jitter on cores the other tests keep
	// busy moved each launch by tens of percent (an A/A MDE of 119% after
	// eight rounds), and the slow variant stayed undecided; at 20× a level
	// lasts long enough that the A/A MDE was 15% under the same load.
	cfg := w.writeConfig(campaignOpts{scenarios: []string{"base", "aa", "slow"}, concurrency: "[1, 2, 4]", requests: 24, speed: 20})
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Eight rounds at most, though a variant this slow is decided after
	// four or five: on a machine whose cores the other tests keep busy, one
	// launch stalled by the scheduler can inflate a round's variance, and
	// the rounds after it must still have room to decide before the end.
	const maxRounds = 8
	text := strings.Replace(string(body), "rounds: 1\n", fmt.Sprintf("rounds: {min: 3, max: %d}\n", maxRounds), 1)
	// Launch noise as a real host has it, so the rounds differ; a load of
	// 0.2 s, not 1 s, of each of the 24 launches' wall time.
	text = strings.Replace(text, `"--sim-load-time", "20s"]`, `"--sim-load-time", "4s", "--sim-launch-sigma", "0.01"]`, 1)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(w.root, "run")
	combined, err := w.bakeoff("run", cfg, "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, combined)
	}
	run := readSummary(t, out)
	launches := map[string][]int{}
	for _, sr := range run.Summary.Scenarios {
		if sr.Status != results.StatusOK {
			t.Errorf("%s round %d: %s %s", sr.Name, sr.RoundOf(), sr.Status, sr.Reason)
		}
		launches[sr.Name] = append(launches[sr.Name], sr.RoundOf())
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Sequential == nil {
		t.Fatalf("the verdict did not take the run's sequential plan:\n%s", combined)
	}
	stop := map[string]verdict.VariantStop{}
	for _, vs := range v.Sequential.Variants {
		stop[vs.Variant] = vs
	}
	slow := stop["slow"]
	switch {
	case slow.Doubted > 0:
		// A level the client paced in its launches (a loaded machine, the
		// lowest levels) is never decided, and it holds slow open to the
		// maximum in case the doubt clears: that is the rule, not a miss.
		if !slow.Stopped || slow.StoppedAfter != maxRounds || slow.Decided+slow.Doubted != slow.Comparisons {
			t.Errorf("slow: %+v, want every comparison decided or doubted, stopped at round %d", slow, maxRounds)
		}
		t.Logf("slow kept open by %d doubted comparisons: %s", slow.Doubted, slow.Reason)
	case !slow.Stopped || slow.StoppedAfter >= maxRounds || slow.Decided != slow.Comparisons:
		t.Errorf("slow: %+v, want decided before round %d", slow, maxRounds)
	}
	// No launch of slow after the look that stopped it.
	if n := len(launches["slow"]); n != slow.StoppedAfter {
		t.Errorf("slow launched in rounds %v, stopped after %d", launches["slow"], slow.StoppedAfter)
	}
	aa := stop["aa"]
	if !aa.Stopped && len(launches["aa"]) != maxRounds {
		t.Errorf("aa: open after %v rounds: %+v", launches["aa"], aa)
	}
	// A level whose pacing the client may have set is doubted, not
	// decided (on a loaded machine the lowest levels at 20× can be): that
	// is never a wrong call, but slow must be found slower somewhere.
	// The A/A pair is judged at α = 0.001, as TestSlotsAA's is: at the
	// campaign's 0.05 a correct rule names a winner in up to one campaign
	// in twenty (once in 21 runs here: −1.4% at C=2), its stated error
	// rate, not a fault, and a test CI would fail that often. make
	// contention measures the rate at 0.05 over 40 campaigns per kind of
	// load (docs/METHOD.md).
	strict, err := judge.Run(run, verdict.Options{Alpha: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range strict.Rows {
		for _, c := range row.Cells {
			if c.Scenario == "aa" && c.Compared && (c.Outcome == verdict.OutcomeFaster || c.Outcome == verdict.OutcomeSlower) {
				t.Errorf("A/A named a winner at %s at α = 0.001: %s %+.1f%%", row.Level, c.Outcome, c.DeltaPct)
			}
		}
	}
	slower := 0
	for _, row := range v.Rows {
		for _, c := range row.Cells {
			if c.Scenario == "slow" && c.Compared && c.Outcome != verdict.OutcomeSlower && c.Outcome != verdict.OutcomeDoubted {
				t.Errorf("slow at %s: %s, want slower", row.Level, c.Outcome)
			}
			if c.Scenario == "slow" && c.Outcome == verdict.OutcomeSlower {
				slower++
			}
		}
	}
	if slower == 0 && slow.Doubted < slow.Comparisons {
		t.Errorf("slow was found slower at no level it did not doubt")
	}
	// The baseline runs while a variant is open.
	if want := max(len(launches["aa"]), len(launches["slow"])); len(launches["base"]) != want {
		t.Errorf("base launched in rounds %v, the variants' last round %d", launches["base"], want)
	}
	var looks []orchestrator.LookRecord
	for _, e := range journal(t, out) {
		if e.Phase == orchestrator.PhaseLook && e.Look != nil {
			looks = append(looks, *e.Look)
		}
	}
	t.Logf("launches %v; slow %+v; aa %+v; looks %+v", launches, slow, aa, looks)
	if len(looks) == 0 || looks[0].After != 3 {
		t.Fatalf("looks %+v, want the first after round 3", looks)
	}
	for _, l := range looks {
		if slow.StoppedAfter < maxRounds && l.After >= slow.StoppedAfter && slices.Contains(l.Open, "slow") {
			t.Errorf("look after %d rounds still has slow open: %+v", l.After, l)
		}
	}
	// The manifest's rows are what ran.
	for k, row := range run.Manifest.Order {
		if slices.Contains(row, "slow") != slices.Contains(launches["slow"], k+1) {
			t.Errorf("manifest round %d is %v; slow ran in %v", k+1, row, launches["slow"])
		}
	}
	for _, want := range []string{"look after 3 rounds", fmt.Sprintf("Sequential rounds (3 to %d)", maxRounds), "slow: "} {
		if !strings.Contains(string(combined), want) {
			t.Errorf("the run's output does not say %q:\n%s", want, combined)
		}
	}
}

// TestBudgetLeavesRoundsOut: a round that would end after --budget is not
// started, and the end of the run says so with the resume command.
func TestBudgetLeavesRoundsOut(t *testing.T) {
	w := newWorld(t)
	w.scenario("base", "")
	w.scenario("b", "base")
	cfg := w.writeConfig(campaignOpts{scenarios: []string{"base", "b"}, rounds: 2})
	out := filepath.Join(w.root, "run")
	combined, err := w.bakeoff("run", cfg, "--out", out, "--budget", "2s").CombinedOutput()
	if err == nil {
		t.Fatalf("a run that left its rounds out exited 0:\n%s", combined)
	}
	for _, want := range []string{
		"with 2s not one more round fits",
		"Out of time: rounds 1, 2 not started (not enough time left before the campaign's budget of 2s)",
		"Resume with: bakeoff run",
	} {
		if !strings.Contains(string(combined), want) {
			t.Errorf("the run's output does not say %q:\n%s", want, combined)
		}
	}
	if _, err := w.bakeoff("run", cfg, "--budget", "2s", "--deadline", "07:00").CombinedOutput(); err == nil {
		t.Error("--budget with --deadline was accepted")
	}
}
