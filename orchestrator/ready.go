package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// Defaults for the ready phase.
const (
	// DefaultLogChunk is the most log bytes read per poll.
	DefaultLogChunk = 1 << 20
	// DefaultCrashSettle is how long a failure waits for a dying server to
	// finish writing its traceback before the log tail is taken.
	DefaultCrashSettle = 2 * time.Second
	// DefaultFailureScanLines is how many of the log's last lines a crash
	// is explained from: vLLM's root cause comes before two more
	// tracebacks of its consequences, further back than the tail a
	// failure carries (DefaultLogTailLines).
	DefaultFailureScanLines = 400
)

// waitReady polls health until the engine profile says ready (200; or, once
// the engine's ready line or engine.ready_line was seen, anything but 503).
// Meanwhile it reads the new log lines (the newest is shown to the person
// watching) and fails fast when the process dies or one of the engine's
// fatal signatures appears, with the log tail; the health timeout ends a
// silent hang (NCCL can hang without a word).
func waitReady(ctx context.Context, s *scenarioRun) error {
	if s.dep != nil {
		return readyDeployment(ctx, s)
	}
	o := s.o
	p := s.profile
	readyLine := o.c.Engine.ReadyLine
	if readyLine == "" {
		readyLine = p.ReadyLine
	}
	url := s.baseURL + o.c.Engine.HealthPath
	deadline := o.now().Add(o.c.Engine.HealthTimeout)
	var scan lineScanner
	readySeen := false
	for {
		lines, err := s.readLog(ctx, &scan)
		if err != nil {
			s.warn(err.Error())
		}
		for _, line := range lines {
			if p.FatalLine(line) != "" {
				// The reason goes on with the log's line that says what
				// went wrong, often this one.
				return s.crashed(ctx, "ready", "server failed while loading", nil)
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
		if err := pause.For(ctx, o.c.Engine.PollInterval); err != nil {
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
// it lets the process finish writing (or dying) first, then reads the log:
// the line that says what went wrong follows what on the reason's first
// line (which is what summaries show), the log's excerpt of the engine
// profile's Failure follows below it, and the last lines become the tail.
func (s *scenarioRun) crashed(ctx context.Context, phase StepName, what string, err error) *ScenarioError {
	if s.dep != nil {
		return s.crashedDeployment(ctx, phase, what, err)
	}
	o := s.o
	settle := o.now().Add(DefaultCrashSettle)
	for o.now().Before(settle) {
		if alive, aerr := remote.Alive(ctx, s.w.h, s.w.paths.serverPID); aerr == nil && !alive {
			break
		}
		if pause.For(ctx, DefaultCrashSettle/10) != nil {
			break
		}
	}
	log := s.lastLogLines(context.WithoutCancel(ctx), DefaultFailureScanLines)
	f := s.profile.Failure(log)
	reason := what
	if f.Line != "" {
		reason += ": " + f.Line
	}
	if f.Excerpt != "" {
		reason += "\n" + f.Excerpt
	}
	return s.fail(phase, reason, lastLines(log, DefaultLogTailLines), err)
}
