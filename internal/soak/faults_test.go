package soak

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testhost"
)

// fault is one fault of a schedule: injected once the given share of the
// campaign's launches has ended.
type fault struct {
	name string
	at   float64 // share of launches ended, 0–1
	host int     // index into the fleet
	// inject does it and returns what it hit (the launch, the pid); it
	// returns an error when it could not land (the campaign ended first).
	inject func(ctx context.Context, in *injector, h *testhost.Host) (string, error)
}

// injected is a fault as it happened.
type injected struct {
	fault
	hostName string
	at       time.Duration // from the campaign's start
	note     string
	err      error
}

// injector runs a fault schedule against a running campaign.
type injector struct {
	t     *testing.T
	f     *fleet
	r     *running
	total int // launches in the campaign
	log   []injected
	// lost are the hosts powered off for good (left out of the end checks
	// on processes: nothing can run there).
	lost map[*testhost.Host]bool
}

// run injects the schedule in order; it returns when the last fault is
// done or the campaign has ended.
func (in *injector) run(ctx context.Context, schedule []fault) {
	for _, fl := range schedule {
		h := in.f.hosts[fl.host%len(in.f.hosts)]
		if !in.waitEnded(ctx, fl.at) {
			in.log = append(in.log, injected{fault: fl, hostName: h.Alias, err: fmt.Errorf("the campaign ended before %.0f%% of its launches", fl.at*100)})
			continue
		}
		at := time.Since(in.r.started)
		note, err := fl.inject(ctx, in, h)
		in.log = append(in.log, injected{fault: fl, hostName: h.Alias, at: at, note: note, err: err})
		in.t.Logf("fault %q on %s at %s: %s %v", fl.name, h.Alias, at.Round(time.Second), note, err)
	}
}

// waitEnded waits until share of the launches have ended; false if the
// campaign ended first.
func (in *injector) waitEnded(ctx context.Context, share float64) bool {
	for {
		n := 0
		for _, e := range readJournal(in.r.runDir) {
			if e.Phase == "scenario" && e.Event == "end" {
				n++
			}
		}
		if float64(n) >= share*float64(in.total) {
			return true
		}
		if !in.sleep(ctx, 200*time.Millisecond) {
			return false
		}
	}
}

// sleep waits d unless the campaign ends first.
func (in *injector) sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-in.r.done:
		return false
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// waitPhase waits for the next start of phase on host h, written after
// now; it returns the journal line.
func (in *injector) waitPhase(ctx context.Context, h *testhost.Host, phase string) (entry, bool) {
	from := len(readJournal(in.r.runDir))
	for {
		es := readJournal(in.r.runDir)
		for _, e := range es[min(from, len(es)):] {
			if e.Phase == phase && e.Event == "start" && hostMatches(e, h) {
				return e, true
			}
		}
		if !in.sleep(ctx, 20*time.Millisecond) {
			return entry{}, false
		}
	}
}

// linkCut cuts h's link for d as the next phase starts there.
func linkCut(phase string, d time.Duration) func(context.Context, *injector, *testhost.Host) (string, error) {
	return func(ctx context.Context, in *injector, h *testhost.Host) (string, error) {
		e, ok := in.waitPhase(ctx, h, phase)
		if !ok {
			return "", fmt.Errorf("no %s started before the campaign ended", phase)
		}
		h.LinkDown()
		time.Sleep(d)
		h.LinkUp()
		return fmt.Sprintf("cut %s at %s of %s round %d", d, phase, e.Scenario, e.Round), nil
	}
}

// crashServer SIGKILLs the server of the next launch on h whose load
// generator is still running `after` it started: the engine dies with
// requests in flight.
func crashServer(after time.Duration) func(context.Context, *injector, *testhost.Host) (string, error) {
	return func(ctx context.Context, in *injector, h *testhost.Host) (string, error) {
		for tries := 0; tries < 20; tries++ {
			e, ok := in.waitPhase(ctx, h, "sweep")
			if !ok {
				return "", fmt.Errorf("no sweep started before the campaign ended")
			}
			// The phase prepares the sweep's folder and files first; the
			// load generator starts a few round trips later.
			var server, sweep int
			for deadline := time.Now().Add(time.Minute); sweep == 0 && time.Now().Before(deadline); {
				server, sweep = serverAndSweep(in.t, h)
				if sweep == 0 && !in.sleep(ctx, 50*time.Millisecond) {
					return "", fmt.Errorf("the campaign ended before a sweep ran")
				}
			}
			in.sleep(ctx, after)
			if server, sweep = serverAndSweep(in.t, h); server == 0 || sweep == 0 {
				continue // that sweep was over already; take the next
			}
			if err := syscall.Kill(server, syscall.SIGKILL); err != nil {
				return "", fmt.Errorf("killing the server, pid %d: %w", server, err)
			}
			return fmt.Sprintf("SIGKILLed server pid %d %s after the load generator of %s round %d started", server, after, e.Scenario, e.Round), nil
		}
		return "", fmt.Errorf("every sweep was over within %s", after)
	}
}

// serverAndSweep returns the pids of the server and the load generator
// running on h, 0 for one not running.
func serverAndSweep(t *testing.T, h *testhost.Host) (server, sweep int) {
	for _, p := range processes(t, h) {
		switch {
		case isServer(p):
			server = p.Pid
		case isSweep(p):
			sweep = p.Pid
		}
	}
	return server, sweep
}

// powerOff loses h for good as its next sweep starts: its link goes down
// and every process on it dies, as when a machine loses power.
func powerOff(ctx context.Context, in *injector, h *testhost.Host) (string, error) {
	e, ok := in.waitPhase(ctx, h, "sweep")
	if !ok {
		return "", fmt.Errorf("no sweep started before the campaign ended")
	}
	h.LinkDown()
	h.KillSSHD()
	killed := 0
	for _, p := range processes(in.t, h) {
		if syscall.Kill(p.Pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	in.lost[h] = true
	return fmt.Sprintf("powered off during the sweep of %s round %d (%d processes killed)", e.Scenario, e.Round, killed), nil
}
