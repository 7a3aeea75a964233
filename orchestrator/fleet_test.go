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
			t.Errorf("%s event of %s names host %q", e.Kind, e.Scenario, e.Host)
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
