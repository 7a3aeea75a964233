package orchestrator_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// goneHost is a host of the fleet that cannot be reached at all: every call
// fails as a dial to a machine that is off does. (The fleet failures of
// hosts that go away mid-round run against real namespace hosts, in
// faults/fleet_test.go.)
type goneHost struct{ name string }

func (g goneHost) err() error {
	return fmt.Errorf("%s: dial tcp 10.9.9.9:22: connect: no route to host", g.name)
}
func (g goneHost) Name() string { return g.name }
func (g goneHost) Run(context.Context, string) ([]byte, []byte, error) {
	return nil, nil, g.err()
}
func (g goneHost) Upload(context.Context, string, string) error   { return g.err() }
func (g goneHost) Download(context.Context, string, string) error { return g.err() }
func (g goneHost) Open(context.Context, string, int64) (io.ReadCloser, error) {
	return nil, g.err()
}
func (g goneHost) Dial(context.Context, string, string) (net.Conn, error) { return nil, g.err() }
func (g goneHost) Close() error                                           { return nil }

// TestFleetHostLostAtStart: a fleet whose first host cannot be locked runs
// every round on the other; the lost host is journaled and reported, every
// result, journal line and event of a launch names the host that ran it.
func TestFleetHostLostAtStart(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.scenario("b", "a", "cuda-graph-max-bs: 64")
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, rounds: 2})
	local := remote.NewLocal()
	out, events, err := w.runInProcess(context.Background(), orchestrator.Options{
		Hosts: []remote.Host{goneHost{"gpu-gone"}, local}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed > 0 || out.Canceled || out.Stopped != "" || len(out.Results) != 4 {
		t.Fatalf("outcome: %+v", out)
	}
	if len(out.Lost) != 1 || out.Lost[0].Host != "gpu-gone" || out.Lost[0].Round != 0 ||
		!strings.Contains(out.Lost[0].Reason, "no route to host") {
		t.Errorf("lost: %+v, want gpu-gone before any round", out.Lost)
	}
	wantPlaced := []orchestrator.RoundPlacement{{Round: 1, Host: "local"}, {Round: 2, Host: "local"}}
	if !reflect.DeepEqual(out.Placements, wantPlaced) {
		t.Errorf("placements %+v, want %+v", out.Placements, wantPlaced)
	}
	run := readSummary(t, out.RunDir)
	if !reflect.DeepEqual(run.Manifest.Hosts, []string{"gpu-gone", "local"}) {
		t.Errorf("manifest hosts %v", run.Manifest.Hosts)
	}
	for _, r := range run.Summary.Scenarios {
		if r.HostName != "local" || r.Status != results.StatusOK {
			t.Errorf("%s round %d: host %q, status %s", r.Name, r.Round, r.HostName, r.Status)
		}
	}
	lostLines := 0
	for _, e := range journal(t, out.RunDir) {
		switch {
		case e.Phase == orchestrator.PhaseHost:
			lostLines++
			if e.Host != "gpu-gone" || e.Event != orchestrator.HostLost || e.Error == "" {
				t.Errorf("host line %+v", e)
			}
		case e.Scenario != "" && e.Host != "local":
			t.Errorf("journal line of %s names host %q", e.Scenario, e.Host)
		}
	}
	if lostLines != 1 {
		t.Errorf("%d host-lost lines in the journal, want 1", lostLines)
	}
	for _, e := range events {
		if e.Scenario != "" && e.Host != "local" {
			t.Errorf("%s event of %s names host %q: %s", e.Kind, e.Scenario, e.Host, e.Message)
		}
	}
}

// TestFleetNoHostLeft: a fleet none of whose hosts can be used is an error
// naming each.
func TestFleetNoHostLeft(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}})
	_, _, err := w.runInProcess(context.Background(), orchestrator.Options{
		Hosts: []remote.Host{goneHost{"gpu-1"}, goneHost{"gpu-2"}}})
	if err == nil || !strings.Contains(err.Error(), "gpu-1: locking") || !strings.Contains(err.Error(), "gpu-2: locking") {
		t.Fatalf("err = %v, want both hosts named", err)
	}
}

// TestDeadlineLeavesRoundsOut: rounds whose estimate (before any launch has
// finished: the campaign's bound on loading and GPU waits) ends after the
// deadline are not started; a resume without one runs them.
func TestDeadlineLeavesRoundsOut(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, rounds: 2})
	var outOfTime []int
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{
		Deadline: time.Now().Add(10 * time.Second),
		Events: func(e orchestrator.Event) {
			if e.Kind == orchestrator.EventRoundOutOfTime {
				outOfTime = append(outOfTime, e.Round)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 0 || !reflect.DeepEqual(out.OutOfTime, []int{1, 2}) || !reflect.DeepEqual(outOfTime, []int{1, 2}) {
		t.Fatalf("ran %d launches, out of time %v (events %v); want none run, rounds 1 and 2 left out",
			len(out.Results), out.OutOfTime, outOfTime)
	}
	out, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: out.RunDir})
	if err != nil || len(out.Results) != 2 || out.Failed > 0 || len(out.OutOfTime) > 0 {
		t.Fatalf("resume: %v, %+v", err, out)
	}
}

// TestDeadlineCountsTheSweep: before any launch has finished, a round
// whose waits fit before the deadline but whose sweeps do not (8 requests
// and a warm-up of 2000 tokens, at 20 tokens/s, 15 minutes a launch) is not
// started, and the message says the sweep was counted.
func TestDeadlineCountsTheSweep(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, concurrency: "[1]", maxTokens: 2000})
	var msg string
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{
		Deadline: time.Now().Add(5 * time.Minute),
		Events: func(e orchestrator.Event) {
			if e.Kind == orchestrator.EventRoundOutOfTime {
				msg = e.Message
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 0 || !reflect.DeepEqual(out.OutOfTime, []int{1}) {
		t.Fatalf("ran %d launches, out of time %v; want round 1 left out", len(out.Results), out.OutOfTime)
	}
	if !strings.Contains(msg, "its sweep at 20 tokens/s per request") {
		t.Errorf("out-of-time message %q does not say the sweep was counted", msg)
	}
}

// TestFleetUnreachableAtStart: a host the CLI could not connect is recorded
// where a run is read the morning after: a host-lost line in the journal
// (before any round), its reason in the manifest's fleet beside the facts of
// the host that ran (GPUs and driver from its nvidia-smi), and the outcome.
// A resume on which no host can be used fails after recording that too, and
// a later resume with the host back finishes the run, the earlier facts
// kept.
func TestFleetUnreachableAtStart(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, rounds: 2})
	off := orchestrator.HostLoss{Host: "gpu-off", Reason: "cannot be reached: dial tcp 10.9.9.9:22: connect: no route to host"}
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{
		Hosts: []remote.Host{remote.NewLocal()}, Unreachable: []orchestrator.HostLoss{off}, Round: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || out.Failed > 0 {
		t.Fatalf("outcome: %+v", out)
	}
	if !reflect.DeepEqual(out.Lost, []orchestrator.HostLoss{off}) {
		t.Errorf("lost: %+v, want %+v", out.Lost, off)
	}
	hostLines := func() []orchestrator.JournalEntry {
		var lines []orchestrator.JournalEntry
		for _, e := range journal(t, out.RunDir) {
			if e.Phase == orchestrator.PhaseHost {
				lines = append(lines, e)
			}
		}
		return lines
	}
	lines := hostLines()
	if len(lines) != 1 || lines[0].Host != "gpu-off" || lines[0].Event != orchestrator.HostLost || lines[0].Round != 0 ||
		lines[0].Error != off.Reason {
		t.Errorf("host lines %+v, want one for gpu-off before any round", lines)
	}
	man := readSummary(t, out.RunDir).Manifest
	if !reflect.DeepEqual(man.Hosts, []string{"local", "gpu-off"}) {
		t.Errorf("manifest hosts %v", man.Hosts)
	}
	if len(man.Fleet) != 2 {
		t.Fatalf("manifest fleet %+v, want local and gpu-off", man.Fleet)
	}
	local, gone := man.Fleet[0], man.Fleet[1]
	if local.Host != "local" || local.LeftOut != "" || local.Facts == nil || local.Facts.Driver == "" ||
		len(local.Facts.GPUs) == 0 || local.Facts.OS == "" {
		t.Errorf("manifest fleet entry of local %+v, want its facts", local)
	}
	if local.Facts != nil && !reflect.DeepEqual(*local.Facts, man.Host) {
		t.Errorf("fleet facts of local %+v, host facts %+v: want the same", *local.Facts, man.Host)
	}
	if gone.Host != "gpu-off" || gone.LeftOut != off.Reason || gone.Facts != nil {
		t.Errorf("manifest fleet entry of gpu-off %+v, want left out with %q", gone, off.Reason)
	}

	// Nothing reachable: the resume fails, and says so in the run.
	_, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: out.RunDir,
		Unreachable: []orchestrator.HostLoss{off, {Host: "local", Reason: "cannot be reached: connection refused"}}})
	if err == nil || !strings.Contains(err.Error(), "gpu-off: cannot be reached") || !strings.Contains(err.Error(), "local: cannot be reached") {
		t.Fatalf("resume with no host: err %v, want both hosts named", err)
	}
	if n := len(hostLines()); n != 3 {
		t.Errorf("%d host lines after the failed resume, want 3", n)
	}
	man = readSummary(t, out.RunDir).Manifest
	if man.Fleet[0].LeftOut == "" || man.Fleet[0].Facts == nil {
		t.Errorf("fleet entry of local after the failed resume %+v, want left out, its earlier facts kept", man.Fleet[0])
	}

	// Back: the resume runs round 2 and finishes the run.
	out, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: out.RunDir,
		Hosts: []remote.Host{remote.NewLocal()}, Unreachable: []orchestrator.HostLoss{off}})
	if err != nil || len(out.Results) != 1 || out.Failed > 0 || len(out.Skipped) != 1 {
		t.Fatalf("resume: %v, %+v", err, out)
	}
	man = readSummary(t, out.RunDir).Manifest
	if man.Fleet[0].LeftOut != "" || man.Fleet[0].Facts == nil {
		t.Errorf("fleet entry of local after the resume %+v, want used, with facts", man.Fleet[0])
	}
}
