package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// stopOld stops a sweep and a server left by anything before this scenario:
// the pid files have fixed names, so a killed orchestrator's leftovers are
// found by the next run, resumed or not. A process no pid file names is not
// ours to kill (it may be another user's server); if it holds the port, the
// launch fails fast with "Address already in use" and says so.
func stopOld(ctx context.Context, s *scenarioRun) error {
	for _, pidFile := range []string{s.w.paths.sweepPID, s.w.paths.serverPID} {
		if err := s.stopOverLink(ctx, pidFile); err != nil {
			return fmt.Errorf("stopping the process of %s on %s: %w", pidFile, s.w.h.Name(), err)
		}
	}
	if s.o.deployments {
		// The processes of a deployment, of this launch's shape or any
		// other, have pid files of their own on every host of the launch.
		return s.stopOldRoles(ctx)
	}
	return nil
}

// Variables every server is started with, naming its launch: a server (or
// a wrapper script) may use them, and `bakeoff sim` mixes them into a
// --sim-seed so that every launch draws its own launch noise.
const (
	EnvRound  = "BAKEOFF_ROUND"  // the round, 1-based
	EnvLaunch = "BAKEOFF_LAUNCH" // 0-based position in the campaign's launch sequence
)

// launch starts the server detached, its output in a fresh log file.
func launch(ctx context.Context, s *scenarioRun) error {
	if s.dep != nil {
		return launchDeployment(ctx, s)
	}
	o := s.o
	sc := *s.sc
	sc.Env = maps.Clone(s.sc.Env)
	if sc.Env == nil {
		sc.Env = map[string]string{}
	}
	sc.Env[EnvRound] = strconv.Itoa(s.round)
	sc.Env[EnvLaunch] = strconv.Itoa(s.pos)
	l, err := campaign.Render(o.c, &sc, campaign.On{Bakeoff: s.w.hostBakeoff, Workdir: s.w.paths.workdir})
	if err != nil {
		return err
	}
	s.launch = l
	s.result.Launch = l.Command
	// Whatever answers on the port now is not this scenario's server: if a
	// stranger holds it, health and the sweep would measure the stranger.
	addr := fmt.Sprintf("127.0.0.1:%d", o.c.Engine.Port)
	if conn, err := s.w.h.Dial(ctx, "tcp", addr); err == nil {
		conn.Close()
		return s.fail("launch", fmt.Sprintf("port %d on %s is already in use by a process this campaign did not start; stop it or choose another engine.port",
			o.c.Engine.Port, s.w.h.Name()), "", nil)
	}
	// A fresh log, so the ready phase scans only this server's lines; the
	// user's only (umask 077), as logs name paths and hosts.
	fresh := fmt.Sprintf("umask 077 && mkdir -p %s && : > %s", campaign.ShellQuote(s.w.paths.logs), campaign.ShellQuote(s.serverLog))
	// The directories the engine refuses to start without (llama.cpp's slot
	// save path): a fresh host has none of them.
	for _, d := range l.Dirs {
		fresh += " && mkdir -p " + campaign.ShellQuote(d)
	}
	err = s.w.overLink(ctx, s.sc.Name, "creating the server log", func(ctx context.Context) error {
		_, _, err := s.w.h.Run(ctx, fresh)
		return err
	})
	if err != nil {
		return fmt.Errorf("creating %s on %s: %w", s.serverLog, s.w.h.Name(), err)
	}
	s.logOffset = 0
	err = s.w.startOverLink(ctx, s.sc.Name, remote.ProcessSpec{Command: l.Command, Dir: s.w.paths.workdir,
		LogFile: s.serverLog, PIDFile: s.w.paths.serverPID})
	if err != nil {
		return fmt.Errorf("launching %s on %s: %w", s.sc.Name, s.w.h.Name(), err)
	}
	s.event(Event{Kind: EventWaiting, Phase: "launch", Message: "server started, log " + s.serverLog})
	return nil
}

// stopServer stops the server's process group: SIGTERM, the grace period,
// then SIGKILL. The sweep goes first, so the server drains no new load.
func stopServer(ctx context.Context, s *scenarioRun) error {
	if s.dep != nil {
		return stopDeployment(ctx, s)
	}
	if err := s.stopOverLink(ctx, s.w.paths.sweepPID); err != nil {
		return fmt.Errorf("stopping the sweep of %s on %s: %w", s.sc.Name, s.w.h.Name(), err)
	}
	if err := s.stopOverLink(ctx, s.w.paths.serverPID); err != nil {
		return fmt.Errorf("stopping the server of %s on %s: %w", s.sc.Name, s.w.h.Name(), err)
	}
	return nil
}

// saveLog downloads the whole server log into the scenario's results.
func saveLog(ctx context.Context, s *scenarioRun) error {
	if s.dep != nil {
		return saveDeploymentLogs(ctx, s)
	}
	if s.launch == nil {
		return nil
	}
	local := filepath.Join(s.dir, results.ServerLog)
	err := s.w.overLink(ctx, s.sc.Name, "downloading the server log", func(ctx context.Context) error {
		return s.w.h.Download(ctx, s.serverLog, local)
	})
	if err != nil {
		return fmt.Errorf("downloading the server log %s from %s: %w", s.serverLog, s.w.h.Name(), err)
	}
	setResultMode(local)
	return nil
}

// logTail is the last lines of the server log, for a failure's excerpt; an
// error reading it becomes the excerpt, since the failure matters more.
func (s *scenarioRun) logTail(ctx context.Context) string {
	return s.lastLogLines(ctx, DefaultLogTailLines)
}

// lastLogLines is the last n lines of the server log, or what went wrong
// reading them.
func (s *scenarioRun) lastLogLines(ctx context.Context, n int) string {
	tail, err := remote.LastLines(ctx, s.w.h, s.serverLog, n)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", path.Base(s.serverLog), err)
	}
	return tail
}

// lastLines is the last n lines of text.
func lastLines(text string, n int) string {
	lines := strings.Split(text, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// DefaultLogTailLines is how many log lines a failure carries.
const DefaultLogTailLines = 40

// stopOverLink stops the process group of pidFile; Stop is idempotent, so a
// drop in the middle is simply retried. What was signalled, and how long
// it took, goes into the journal; a process that needed SIGKILL is warned
// about, since a server that ignores SIGTERM holds every stop to the grace
// and may leave GPU memory in a state the next launch pays for.
func (s *scenarioRun) stopOverLink(ctx context.Context, pidFile string) error {
	return s.stopOn(ctx, s.w, pidFile)
}

// stopOn is stopOverLink on one host of the launch's group (an instance of
// a deployment on another node).
func (s *scenarioRun) stopOn(ctx context.Context, w *worker, pidFile string) error {
	o := s.o
	var st remote.Stopped
	start := o.now()
	err := w.overLink(ctx, s.sc.Name, "stopping "+pidFile, func(ctx context.Context) error {
		var err error
		st, err = remote.StopReport(ctx, w.h, pidFile, o.c.Engine.StopGrace)
		return err
	})
	if st.PID == 0 {
		return err
	}
	rec := &StopRecord{PIDFile: path.Base(pidFile), PID: st.PID, Signals: st.Signals, TookS: o.now().Sub(start).Seconds()}
	for _, d := range st.Waits {
		rec.WaitsS = append(rec.WaitsS, d.Seconds())
	}
	o.journal(JournalEntry{Time: o.now(), Scenario: s.sc.Name, Round: s.round, Attempt: s.attempt, Phase: string(s.step),
		Event: EventStopped, Host: w.tag, Stop: rec})
	if st.Killed() {
		s.warn(fmt.Sprintf("%s on %s: process group %d did not exit within stop_grace %s of SIGTERM and was killed (SIGKILL)",
			path.Base(pidFile), w.h.Name(), st.PID, o.c.Engine.StopGrace))
	}
	return err
}
