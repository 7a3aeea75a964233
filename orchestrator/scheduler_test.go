package orchestrator

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"testing"
)

func jobs(rounds ...int) []*roundJob {
	var out []*roundJob
	for _, r := range rounds {
		out = append(out, &roundJob{round: r})
	}
	return out
}

// TestSchedulerHandsOutRoundsInOrder: each free host takes the first round
// homed nowhere; a round homed to a host goes only to it, before the rest.
func TestSchedulerHandsOutRoundsInOrder(t *testing.T) {
	js := jobs(1, 2, 3, 4)
	js[2].home = "b"
	s := newScheduler(js)
	var got []string
	take := func(host string) *roundJob {
		j := s.next(host)
		if j == nil {
			t.Fatalf("%s got no round", host)
		}
		got = append(got, host+":"+strconv.Itoa(j.round))
		return j
	}
	a1 := take("a")
	b := take("b") // its home round first
	a2 := take("a")
	s.done(a1)
	s.done(b)
	s.done(a2)
	last := take("b")
	s.done(last)
	if j := s.next("a"); j != nil {
		t.Errorf("a got round %d after every round was done", j.round)
	}
	want := []string{"a:1", "b:3", "a:2", "b:4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("placed %v, want %v", got, want)
	}
}

// TestSchedulerLostHostHandsItsRoundOver: the round of a lost host goes to
// the front of the queue, to run whole, and a host waiting for work (the
// queue empty, another host still running) gets it.
func TestSchedulerLostHostHandsItsRoundOver(t *testing.T) {
	js := jobs(1, 2)
	js[1].home = "a" // homed to the host that will be lost
	s := newScheduler(js)
	j1 := s.next("a")
	if j1 == nil || j1.round != 2 {
		t.Fatalf("a took %+v, want its home round 2", j1)
	}
	j := s.next("b")
	if j == nil || j.round != 1 {
		t.Fatalf("b took %+v, want round 1", j)
	}
	s.done(j)
	// b now waits: nothing it may take is queued, and a still runs.
	got := make(chan *roundJob)
	go func() { got <- s.next("b") }()
	s.lose("a", j1)
	moved := <-got
	if moved == nil || moved.round != 2 || !moved.whole || moved.home != "" || !reflect.DeepEqual(moved.from, []string{"a"}) {
		t.Fatalf("b got %+v, want round 2 to run whole, moved from a", moved)
	}
	if j := s.next("a"); j != nil {
		t.Errorf("the lost host got round %d", j.round)
	}
	s.done(moved)
	if j := s.next("b"); j != nil {
		t.Errorf("b got round %d after every round was done", j.round)
	}
}

// TestSchedulerRoundsHomedToALostHost run whole wherever there is room.
func TestSchedulerRoundsHomedToALostHost(t *testing.T) {
	js := jobs(1, 2)
	js[0].home = "a"
	s := newScheduler(js)
	s.lose("a", nil)
	j := s.next("b")
	if j == nil || j.round != 1 || !j.whole || j.home != "" {
		t.Fatalf("b took %+v, want round 1, whole", j)
	}
	s.done(j)
	if j := s.next("b"); j == nil || j.round != 2 || j.whole {
		t.Fatalf("b took %+v, want round 2 as planned", j)
	}
}

// TestSchedulerStop: after stop nobody gets a round, and a waiting host
// wakes up.
func TestSchedulerStop(t *testing.T) {
	s := newScheduler(jobs(1))
	j := s.next("a")
	got := make(chan *roundJob)
	go func() { got <- s.next("b") }()
	s.stop()
	if j2 := <-got; j2 != nil {
		t.Errorf("b got round %d after stop", j2.round)
	}
	s.done(j)
}

func TestHostWorkdir(t *testing.T) {
	for _, tc := range []struct{ workdir, host, want string }{
		{"/tmp/bakeoff", "gpu-a", "/tmp/bakeoff"},
		{"/nfs/bakeoff/{host}", "gpu-a", "/nfs/bakeoff/gpu-a"},
		{"/w/{host}", "me@gpu-c:2222", "/w/me_gpu-c_2222"},
		{"/w/{host}/{host}", "[::1]:22", "/w/___1__22/___1__22"},
	} {
		if got := HostWorkdir(tc.workdir, tc.host); got != tc.want {
			t.Errorf("HostWorkdir(%q, %q) = %q, want %q", tc.workdir, tc.host, got, tc.want)
		}
	}
}

// TestHostFailure: which failures of a launch are its host's. The host is a
// real one (this machine) that answers.
func TestHostFailure(t *testing.T) {
	newRun := func(o *orch, w *worker, name string) *scenarioRun {
		return &scenarioRun{o: o, w: w, sc: &campaign.Scenario{Name: name}}
	}
	fail := func(phase StepName) error {
		return &ScenarioError{Scenario: "x", Phase: phase, Reason: "server exited while loading\nTraceback"}
	}
	o := &orch{now: time.Now, linkPatience: time.Second}
	here := &worker{o: o, h: remote.NewLocal()}
	if why := o.hostFailure(context.Background(), newRun(o, here, "a"), fail("gpu-free")); !strings.Contains(why, "gpu-free failed before a could launch") {
		t.Errorf("gpu-free: %q, want the host's failure", why)
	}
	if why := o.hostFailure(context.Background(), newRun(o, here, "a"), fail("sweep")); why != "" {
		t.Errorf("sweep: %q, want the scenario's failure", why)
	}
	// Loading fails here: the scenario's own failure until it has loaded
	// on another host; then the second such failure in a row is the host's.
	for i := range 3 {
		if why := o.hostFailure(context.Background(), newRun(o, here, "a"), fail("ready")); why != "" {
			t.Errorf("ready, never loaded elsewhere (%d): %q", i, why)
		}
	}
	other := &worker{o: o, h: goneHost{}}
	o.loadedOn(newRun(o, other, "a"))
	o.loadedOn(newRun(o, other, "b"))
	if why := o.hostFailure(context.Background(), newRun(o, here, "a"), fail("ready")); why != "" {
		t.Errorf("first strike: %q, want none yet", why)
	}
	o.loadedOn(newRun(o, here, "b")) // a load here clears the strikes
	if why := o.hostFailure(context.Background(), newRun(o, here, "a"), fail("launch")); why != "" {
		t.Errorf("first strike after a load: %q, want none yet", why)
	}
	why := o.hostFailure(context.Background(), newRun(o, here, "b"), fail("ready"))
	if !strings.Contains(why, "2 servers in a row failed to load here that load on other hosts") {
		t.Errorf("second strike: %q, want the host's failure", why)
	}
	if here.unreachable {
		t.Errorf("a host that answers was marked unreachable")
	}
	// A host its watcher gives up is lost whatever the failure, and
	// teardown leaves it alone.
	o.opt.Watch = lostWatcher{}
	why = o.hostFailure(context.Background(), newRun(o, here, "a"), fail("sweep"))
	if why != "unreachable for 1s: no route to host (during a)" || !here.unreachable {
		t.Errorf("a host the watcher lost: %q (unreachable %v), want it lost, naming the scenario", why, here.unreachable)
	}
}

// lostWatcher says every host is lost.
type lostWatcher struct{}

func (lostWatcher) Watch(context.Context, remote.Host) error {
	return errors.New("unreachable for 1s: no route to host")
}

// goneHost is a host whose name is all there is to it.
type goneHost struct{ remote.Host }

func (goneHost) Name() string { return "gpu-other" }
