package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// campaignEvents is a short campaign as the orchestrator reports it.
func campaignEvents() []orchestrator.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sum := measure.LevelSummary{Level: measure.ConcurrencyLevel(1), Counts: measure.Counts{Requests: 4, OK: 4}, Throughput: 90}
	var evs []orchestrator.Event
	add := func(e orchestrator.Event) {
		e.Time = t0.Add(time.Duration(len(evs)) * time.Second)
		evs = append(evs, e)
	}
	add(orchestrator.Event{Kind: orchestrator.EventCampaignStart, Total: 2, RunDir: "results/x/1", Message: "local"})
	for i, name := range []string{"a", "b"} {
		sc := func(e orchestrator.Event) { e.Scenario, e.Index, e.Total = name, i+1, 2; add(e) }
		sc(orchestrator.Event{Kind: orchestrator.EventScenarioStart})
		sc(orchestrator.Event{Kind: orchestrator.EventPhaseStart, Phase: "ready"})
		sc(orchestrator.Event{Kind: orchestrator.EventServerLog, Message: "Load weight begin"})
		sc(orchestrator.Event{Kind: orchestrator.EventPhaseEnd, Phase: "ready", Outcome: "ok", Duration: time.Second})
		sc(orchestrator.Event{Kind: orchestrator.EventPhaseStart, Phase: "sweep"})
		// The warm-up reports its start, then each request it finishes.
		sc(orchestrator.Event{Kind: orchestrator.EventSweep, Sweep: &loadgen.Event{Kind: loadgen.EventWarmup, Level: measure.ConcurrencyLevel(2), Total: 2}})
		for d := 1; d <= 2; d++ {
			sc(orchestrator.Event{Kind: orchestrator.EventSweep, Sweep: &loadgen.Event{Kind: loadgen.EventWarmup, Done: d, Total: 2}})
		}
		for d := 0; d <= 4; d++ {
			sc(orchestrator.Event{Kind: orchestrator.EventSweep, Sweep: &loadgen.Event{Kind: loadgen.EventProgress, Level: measure.ConcurrencyLevel(1), Done: d, Total: 4, TokPerSec: 88}})
		}
		sc(orchestrator.Event{Kind: orchestrator.EventSweep, Sweep: &loadgen.Event{Kind: loadgen.EventLevelEnd, Level: measure.ConcurrencyLevel(1), Total: 4, Summary: &sum}})
		if name == "b" {
			sc(orchestrator.Event{Kind: orchestrator.EventPhaseEnd, Phase: "smoke", Outcome: "failed", Err: errors.New("boom\ntraceback")})
			sc(orchestrator.Event{Kind: orchestrator.EventScenarioEnd, Outcome: "failed",
				Result: &results.ScenarioResult{FailedPhase: "smoke", Reason: "smoke request failed\nTraceback"}})
			continue
		}
		sc(orchestrator.Event{Kind: orchestrator.EventScenarioEnd, Outcome: "ok", Result: &results.ScenarioResult{}})
	}
	add(orchestrator.Event{Kind: orchestrator.EventCampaignEnd})
	return evs
}

func TestPlainProgress(t *testing.T) {
	var buf bytes.Buffer
	p := newPlainProgress(&buf, newLaunchCounter())
	for _, e := range campaignEvents() {
		p.event(e)
	}
	p.close()
	out := buf.String()
	for _, want := range []string{
		"03:04:05 campaign: 2 scenarios on local, results in results/x/1",
		"[1/2 a] log: Load weight begin",
		"[1/2 a] ready ok in 1.0s",
		"C=  1 |",
		"[2/2 b] smoke failed in 0.0s: boom …",
		"[2/2 b] failed at smoke: smoke request failed …",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "sweep: warm-up 2 requests"); n != 2 {
		t.Errorf("the warm-up is said %d times for two launches, want once each:\n%s", n, out)
	}
	if strings.Contains(out, "88.0 tok/s") {
		t.Errorf("progress ticks belong to the live display, not the log:\n%s", out)
	}
}

// TestLiveProgress drives the live display with a whole campaign; it must
// finish (decorators and bar updates must not wait on each other) and print
// finished scenarios above the bars.
func TestLiveProgress(t *testing.T) {
	var buf bytes.Buffer
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	p := newLiveProgress(&buf, now, 4, newLaunchCounter())
	for _, e := range campaignEvents() {
		p.event(e)
	}
	p.close()
	out := buf.String()
	for _, want := range []string{"[1/2 a] ok", "[2/2 b] failed at smoke", "[a] C=  1 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

// TestLookLines: a look's line reads as what it decided, then its plan,
// then what changed, each on a line of its own; a look without a plan is
// one line.
func TestLookLines(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want []string
	}{
		{"look after 3 rounds: eagle3: decided after 3 rounds; open: a, b; plan: 2 more rounds (5 in all) of C=1 60 requests (the auto count ×2), about 4m, to bring the MDE to ±3.9%; since the plan before round 1: noise at C=1 higher than assumed (3.1% a round, not 2.0%): 5 rounds in all, not 4",
			[]string{"look after 3 rounds: eagle3: decided after 3 rounds; open: a, b",
				"  plan: 2 more rounds (5 in all) of C=1 60 requests (the auto count ×2), about 4m, to bring the MDE to ±3.9%",
				"  since the plan before round 1: noise at C=1 higher than assumed (3.1% a round, not 2.0%): 5 rounds in all, not 4"}},
		{"look after 4 rounds: open: a; with 19m expect ±3.0% after 5 rounds, 1 more of C=1 300 requests (the auto count ×10); ±2% is out of reach within 5 rounds; since the last look: nothing measured moved by a tenth or more: the same 5 rounds in all",
			[]string{"look after 4 rounds: open: a",
				"  with 19m expect ±3.0% after 5 rounds, 1 more of C=1 300 requests (the auto count ×10); ±2% is out of reach within 5 rounds",
				"  since the last look: nothing measured moved by a tenth or more: the same 5 rounds in all"}},
		{"look after 5 rounds: a: decided after 5 rounds; every variant decided: no more rounds",
			[]string{"look after 5 rounds: a: decided after 5 rounds; every variant decided: no more rounds"}},
	} {
		if got := lookLines(tc.msg); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("lookLines(%q):\n%s\nwant:\n%s", tc.msg, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
