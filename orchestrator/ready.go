package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/remote"
)

// Defaults for the ready phase.
const (
	// DefaultLogChunk is the most log bytes read per poll.
	DefaultLogChunk = 1 << 20
	// DefaultCrashSettle is how long a failure waits for a dying server to
	// finish writing its traceback before the log tail is taken.
	DefaultCrashSettle = 2 * time.Second
)

// waitReady polls health until the engine profile says ready (200; or, once
// the engine's ready line or engine.ready_line was seen, anything but 503).
// Meanwhile it reads the new log lines (the newest is shown to the person
// watching) and fails fast when the process dies or one of the engine's
// fatal signatures appears, with the log tail; the health timeout ends a
// silent hang (NCCL can hang without a word).
func waitReady(ctx context.Context, s *scenarioRun) error {
	o := s.o
	p := s.profile
	readyLine := o.c.Engine.ReadyLine
	if readyLine == "" {
		readyLine = p.ReadyLine
	}
	url := s.baseURL + o.c.Engine.HealthPath
	if o.opt.DryRun {
		s.event(Event{Kind: EventDryCommand, Phase: "ready", Message: "poll GET " + url + " until 200 (503 = loading)"})
		return nil
	}
	deadline := o.now().Add(o.c.Engine.HealthTimeout)
	var scan lineScanner
	readySeen := false
	for {
		lines, err := s.readLog(ctx, &scan)
		if err != nil {
			s.o.warn(s.sc.Name, err.Error())
		}
		for _, line := range lines {
			if sig := p.FatalLine(line); sig != "" {
				return s.crashed(ctx, "ready", fmt.Sprintf("server log shows %q while loading", sig), nil)
			}
			if readyLine != "" && strings.Contains(line, readyLine) {
				readySeen = true
			}
		}
		if n := len(lines); n > 0 {
			s.event(Event{Kind: EventServerLog, Phase: "ready", Message: lines[n-1]})
		}
		status, _, herr := get(ctx, s.client, url, DefaultProbeTimeout)
		if herr == nil && p.Ready(status, readySeen) {
			return nil
		}
		alive, aerr := remote.Alive(ctx, s.w.h, s.w.paths.serverPID)
		if aerr == nil && !alive {
			return s.crashed(ctx, "ready", "server exited while loading", nil)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !o.now().Before(deadline) {
			what := "no answer"
			if herr == nil {
				what = fmt.Sprintf("last status %d", status)
			}
			return s.fail("ready", fmt.Sprintf("not healthy after %s (%s from %s)", o.c.Engine.HealthTimeout, what, url),
				s.logTail(context.WithoutCancel(ctx)), nil)
		}
		if err := sleep(ctx, o.c.Engine.PollInterval); err != nil {
			return err
		}
	}
}

// readLog returns the server log lines written since the last call.
func (s *scenarioRun) readLog(ctx context.Context, scan *lineScanner) ([]string, error) {
	data, next, err := remote.ReadFrom(ctx, s.w.h, s.serverLog, s.logOffset, DefaultLogChunk)
	if err != nil {
		return nil, fmt.Errorf("reading the server log of %s on %s: %w", s.sc.Name, s.w.h.Name(), err)
	}
	s.logOffset = next
	return scan.feed(data), nil
}

// crashed builds the failure of a server that died or logged a fatal line:
// it lets the process finish writing (or dying) first, then puts the
// relevant part of the log into the reason and the tail into the excerpt.
func (s *scenarioRun) crashed(ctx context.Context, phase, what string, err error) *ScenarioError {
	o := s.o
	settle := o.now().Add(DefaultCrashSettle)
	for o.now().Before(settle) {
		if alive, aerr := remote.Alive(ctx, s.w.h, s.w.paths.serverPID); aerr == nil && !alive {
			break
		}
		if sleep(ctx, DefaultCrashSettle/10) != nil {
			break
		}
	}
	tail := s.logTail(context.WithoutCancel(ctx))
	reason := what
	if ex := failureExcerpt(s.profile, tail); ex != "" {
		reason += "\n" + ex
	}
	return s.fail(phase, reason, tail, err)
}
