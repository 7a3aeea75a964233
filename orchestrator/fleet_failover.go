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

// pinger is a host that can say whether it answers without running a
// command: remote.SSH asks its sshd, which a login shell slow to start
// (conda or pyenv init in ~/.bashrc, a hung NFS home) cannot delay.
type pinger interface {
	Ping(ctx context.Context) error
}

// reachable reports whether the host still answers, trying for up to the
// link patience; the error is the last try's. A host that can be pinged is
// pinged; any other is asked to run a trivial command.
func (w *worker) reachable(ctx context.Context) (bool, error) {
	o := w.o
	start := o.now()
	for {
		// Each try gets what is left of the patience (at least one retry
		// interval), so a try that hangs cannot stretch the wait to twice it.
		left := max(o.linkPatience-o.now().Sub(start), DefaultLinkRetry)
		pctx, cancel := context.WithTimeout(ctx, left)
		err := w.answer(pctx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return true, nil
		}
		if o.now().Sub(start) >= o.linkPatience {
			return false, err
		}
		if sleep(ctx, DefaultLinkRetry) != nil {
			return true, nil
		}
	}
}

// answer asks the host once whether it is there.
func (w *worker) answer(ctx context.Context) error {
	if p, ok := w.h.(pinger); ok {
		return p.Ping(ctx)
	}
	_, _, err := w.h.Run(ctx, "true")
	var exit *remote.ExitError
	if errors.As(err, &exit) {
		return nil // it ran: the host is there
	}
	return err
}

// hostFailure decides whether a failed launch is its host's failure rather
// than the scenario's: the host no longer answers (for the link patience),
// or the GPUs or the old server could not be cleared before the launch, or
// servers failed to load here MaxLoadStrikes times in a row whose scenarios
// load on another host. It returns why, or "" when the failure is the
// scenario's own (then a scenario that fails on every host fails, and no
// host is blamed).
func (o *orch) hostFailure(ctx context.Context, s *scenarioRun, failed error) string {
	w := s.w
	if ok, err := w.reachable(ctx); !ok {
		w.unreachable = true
		return fmt.Sprintf("unreachable for %s during %s (%v)", o.linkPatience, s.sc.Name, err)
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
			elsewhere = elsewhere || h != w.h.Name()
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
	o.loaded[s.sc.Name][s.w.h.Name()] = true
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
