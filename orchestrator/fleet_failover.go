package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/remote"
)

// MaxLoadStrikes is how many launches in a row may fail to load on one host
// of a fleet, each of a scenario whose server did load on another host,
// before the host is given up on: one such failure can be the server's bad
// luck, two in a row point at the host.
const MaxLoadStrikes = 2

// Watcher says whether a host of the campaign can still be used: nil if
// it can, else why it is lost. The placement that acquired the hosts knows
// how its kind of host is lost (an SSH host that no longer answers, a node
// whose allocation ended), so the fleet asks it rather than the host.
type Watcher interface {
	Watch(ctx context.Context, h remote.Host) error
}

// watch asks Options.Watch about w's host; without one, every host is
// taken to be there.
func (w *worker) watch(ctx context.Context) error {
	if w.o.opt.Watch == nil {
		return nil
	}
	return w.o.opt.Watch.Watch(ctx, w.h)
}

// hostFailure decides whether a failed launch is its host's failure rather
// than the scenario's: the watcher says the host is lost (an SSH host that
// has not answered for the link patience), or the GPUs or the old server could not be cleared before the launch, or
// servers failed to load here MaxLoadStrikes times in a row whose scenarios
// load on another host. It returns why, or "" when the failure is the
// scenario's own (then a scenario that fails on every host fails, and no
// host is blamed).
func (o *orch) hostFailure(ctx context.Context, s *scenarioRun, failed error) string {
	w := s.w
	lost := func(n *worker, err error) string {
		n.unreachable = true
		if n != w {
			// A launch's node lost: the group, and the round, go.
			return fmt.Sprintf("%s, a node of its group: %v (during %s)", n.h.Name(), err, s.sc.Name)
		}
		return fmt.Sprintf("%v (during %s)", err, s.sc.Name)
	}
	if gone := (*lostNodeError)(nil); errors.As(failed, &gone) {
		return lost(gone.node, gone.err)
	}
	for _, n := range w.nodes() {
		if err := n.watch(ctx); err != nil {
			return lost(n, err)
		}
	}
	var se *ScenarioError
	if !errors.As(failed, &se) {
		return ""
	}
	switch se.Phase {
	case StepStopOld, StepGPUFree:
		return fmt.Sprintf("%s failed before %s could launch: %s", se.Phase, s.sc.Name, firstLine(se.Reason))
	case StepLaunch, StepReady:
		o.mu.Lock()
		elsewhere := false
		for h := range o.loaded[s.sc.Name] {
			elsewhere = elsewhere || h != w.id()
		}
		o.mu.Unlock()
		if !elsewhere {
			return ""
		}
		w.strikes++
		if w.strikes >= MaxLoadStrikes {
			return fmt.Sprintf("%d servers in a row failed to load here that load on other hosts (the last, %s, at %s: %s)",
				w.strikes, s.sc.Name, se.Phase, firstLine(se.Reason))
		}
	}
	return ""
}

// loadedOn notes that the scenario's server became ready on w.
func (o *orch) loadedOn(s *scenarioRun) {
	s.w.strikes = 0
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.loaded == nil {
		o.loaded = map[string]map[string]bool{}
	}
	if o.loaded[s.sc.Name] == nil {
		o.loaded[s.sc.Name] = map[string]bool{}
	}
	o.loaded[s.sc.Name][s.w.id()] = true
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
