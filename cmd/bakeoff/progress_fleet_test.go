package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// fleetEvents are two hosts each running a launch at once, one of them lost.
func fleetEvents() []orchestrator.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var evs []orchestrator.Event
	add := func(e orchestrator.Event) {
		e.Time = t0.Add(time.Duration(len(evs)) * time.Second)
		evs = append(evs, e)
	}
	add(orchestrator.Event{Kind: orchestrator.EventCampaignStart, Total: 4, Rounds: 2, Hosts: 2, RunDir: "results/x/1",
		Message: "gpu-a, gpu-b"})
	on := func(host, sc string, round, index int, e orchestrator.Event) {
		e.Host, e.Scenario, e.Round, e.Rounds, e.Index, e.Total = host, sc, round, 2, index, 4
		add(e)
	}
	on("gpu-a", "a", 1, 1, orchestrator.Event{Kind: orchestrator.EventScenarioStart})
	on("gpu-b", "b", 2, 3, orchestrator.Event{Kind: orchestrator.EventScenarioStart})
	on("gpu-a", "a", 1, 1, orchestrator.Event{Kind: orchestrator.EventPhaseStart, Phase: "sweep"})
	on("gpu-b", "b", 2, 3, orchestrator.Event{Kind: orchestrator.EventPhaseStart, Phase: "sweep"})
	on("gpu-a", "a", 1, 1, orchestrator.Event{Kind: orchestrator.EventSweep, Sweep: &loadgen.Event{Kind: loadgen.EventProgress, Level: measure.ConcurrencyLevel(1), Done: 2, Total: 4}})
	on("gpu-b", "b", 2, 3, orchestrator.Event{Kind: orchestrator.EventScenarioEnd, Outcome: orchestrator.OutcomeHostLost,
		Result: &results.ScenarioResult{FailedPhase: "sweep", Reason: "host gpu-b lost: unreachable for 15m0s"}})
	add(orchestrator.Event{Kind: orchestrator.EventHostLost, Host: "gpu-b", Round: 2, Rounds: 2, Message: "unreachable for 15m0s"})
	on("gpu-a", "a", 1, 1, orchestrator.Event{Kind: orchestrator.EventScenarioEnd, Outcome: "ok", Result: &results.ScenarioResult{}})
	add(orchestrator.Event{Kind: orchestrator.EventRoundOutOfTime, Round: 2, Rounds: 2, Message: "round 2 not started: …"})
	add(orchestrator.Event{Kind: orchestrator.EventCampaignEnd})
	return evs
}

func TestProgressFleet(t *testing.T) {
	var plain bytes.Buffer
	p := newPlainProgress(&plain, newLaunchCounter())
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	var live bytes.Buffer
	l := newLiveProgress(&live, now, 4, newLaunchCounter())
	for _, e := range fleetEvents() {
		p.event(e)
		l.event(e)
	}
	p.close()
	l.close()
	for _, want := range []string{
		"campaign: 4 launches (2 scenarios × 2 rounds) on 2 hosts (gpu-a, gpu-b), a round at a time on each",
		"[1/4 a round 1 on gpu-a] sweep …",
		"[2/4 b round 2 on gpu-b] host-lost at sweep: host gpu-b lost",
		"host gpu-b lost during round 2: unreachable for 15m0s; the round runs again whole on another host",
		"out of time: round 2 not started",
	} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("plain lines lack %q:\n%s", want, plain.String())
		}
	}
	for _, want := range []string{"[1/4 a round 1 on gpu-a] ok", "host gpu-b lost during round 2"} {
		if !strings.Contains(live.String(), want) {
			t.Errorf("the live display lacks %q:\n%s", want, live.String())
		}
	}
}

func TestPrintFleet(t *testing.T) {
	var buf bytes.Buffer
	printFleet(&buf, &orchestrator.Outcome{
		Placements: []orchestrator.RoundPlacement{{Round: 1, Host: "gpu-b"}, {Round: 2, Host: "gpu-a"},
			{Round: 3, Host: "gpu-b", From: []string{"gpu-c"}}},
		Lost: []orchestrator.HostLoss{{Host: "gpu-d", Reason: "locking: host gpu-d is busy"},
			{Host: "gpu-c", Round: 3, Reason: "unreachable for 15m0s during a (…)\nmore"},
			{Host: "gpu-e", Reason: "cannot be reached: dial tcp 10.0.0.5:22: connect: no route to host"}},
	})
	want := `
Rounds by host:
  gpu-a: round 2
  gpu-b: rounds 1, 3 (moved from gpu-c)
  gpu-d: not used: locking: host gpu-d is busy
  gpu-e: not used: cannot be reached: dial tcp 10.0.0.5:22: connect: no route to host

Hosts lost:
  gpu-c during round 3: unreachable for 15m0s during a (…) …
`
	if buf.String() != want {
		t.Errorf("printFleet:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestProgressSplitStart: a campaign whose rounds were split over the
// fleet says so at its start, counting rounds and parts apart.
func TestProgressSplitStart(t *testing.T) {
	got := eventLine(orchestrator.Event{Kind: orchestrator.EventCampaignStart, Total: 312, Rounds: 3, Parts: 15, Hosts: 16,
		RunDir: "results/x/1", Message: "gpu-00, …"})
	want := "campaign: 312 launches (3 rounds split into 15 parts, each the baseline and a share of the variants) on 16 hosts (gpu-00, …), a part at a time on each, results in results/x/1"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestProgressSplitRound: with split rounds a launch is named by the
// campaign's round and by the results round its files are under.
func TestProgressSplitRound(t *testing.T) {
	for _, tc := range []struct {
		ev   orchestrator.Event
		want string
	}{
		{orchestrator.Event{Kind: orchestrator.EventScenarioEnd, Scenario: "a", Round: 7, Replicate: 2, Rounds: 3, Index: 20, Total: 40, Host: "gpu-03", Outcome: "ok"},
			"[20/40 a round 2 (results round 7) on gpu-03] ok"},
		{orchestrator.Event{Kind: orchestrator.EventHostLost, Host: "gpu-03", Round: 7, Replicate: 2, Rounds: 3, Message: "unreachable"},
			"host gpu-03 lost during round 2 (results round 7): unreachable; the round runs again whole on another host"},
		{orchestrator.Event{Kind: orchestrator.EventHostLost, Host: "gpu-03", Round: 1, Rounds: 1, Message: "unreachable"},
			"host gpu-03 lost during round 1: unreachable; the round runs again whole on another host"},
	} {
		if got := eventLine(tc.ev); !strings.HasPrefix(got, tc.want) {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
