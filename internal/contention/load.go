package contention

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// Kind is a kind of CPU contention.
type Kind string

// The kinds of contention. Each stands for a neighbour a campaign meets on
// a shared machine.
const (
	// None starts nothing: the machine as it is, other users included.
	None Kind = "none"
	// Compile is a build: on every core, one short process after another
	// (a compiler invocation each), BurstMin to BurstMax of CPU apiece, with
	// a process start between them.
	Compile Kind = "compile"
	// Busy keeps one core busy throughout: a numerical job, a spinning
	// thread.
	Busy Kind = "busy"
	// Pulse keeps one core busy in bursts: on for PulseMin to PulseMax,
	// off for as long again (each drawn afresh), so that it falls on some
	// levels of a launch and not others, and never in step with them.
	Pulse Kind = "pulse"
)

// Kinds are the kinds of contention the campaigns run under, the machine as
// it is first.
var Kinds = []Kind{None, Compile, Busy, Pulse}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown contention kind %q (want one of none, compile, busy, pulse)", s)
}

// The loads' durations, wall time. A compile's bursts are shorter than
// most real compiler invocations (tenths of a second to seconds) so that
// the load changes within one level of a fast campaign, as a build's does
// within a level of a real one; the pulses are of the order of one level.
const (
	BurstMin = 20 * time.Millisecond
	BurstMax = 400 * time.Millisecond
	PulseMin = 100 * time.Millisecond
	PulseMax = time.Second
	// WorkerLifetime bounds every worker process's life, in case the test
	// that started it dies without stopping it and the parent-death signal
	// does not reach it (a spawner's bursts have no such signal).
	WorkerLifetime = time.Hour
)

// Load is contention this package started: processes of its own, each the
// leader of its own process group, which Stop kills.
type Load struct {
	kind  Kind
	procs []*exec.Cmd
	done  []chan struct{}
}

// Start starts contention of kind k, its processes re-executions of exe
// (the test binary, whose TestMain calls Main), seeded with seed. None
// starts nothing.
func Start(k Kind, exe string, seed uint64) (*Load, error) {
	l := &Load{kind: k}
	var roles [][]string
	switch k {
	case None:
	case Compile:
		// One build job per core, as make -j with as many jobs as cores.
		for i := range runtime.NumCPU() {
			roles = append(roles, []string{roleSpawn, strconv.FormatUint(seed+uint64(i), 10)})
		}
	case Busy:
		roles = append(roles, []string{roleSpin})
	case Pulse:
		roles = append(roles, []string{rolePulse, strconv.FormatUint(seed, 10)})
	default:
		return nil, fmt.Errorf("starting contention: unknown kind %q", k)
	}
	for _, args := range roles {
		cmd, err := startWorker(exe, args...)
		if err != nil {
			l.Stop()
			return nil, fmt.Errorf("starting %s contention: %w", k, err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		l.procs = append(l.procs, cmd)
		l.done = append(l.done, done)
	}
	return l, nil
}

// Kind is the load's kind.
func (l *Load) Kind() Kind { return l.kind }

// PIDs are the load's processes (the group leaders).
func (l *Load) PIDs() []int {
	var out []int
	for _, c := range l.procs {
		out = append(out, c.Process.Pid)
	}
	return out
}

// Stop kills the load's process groups, its workers and whatever they
// started, and waits for the workers to exit. It touches no process this
// package did not start: each group is one a worker leads.
func (l *Load) Stop() error {
	var errs []error
	for i, c := range l.procs {
		if err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("stopping contention worker %d: %w", c.Process.Pid, err))
		}
		<-l.done[i]
	}
	l.procs, l.done = nil, nil
	return errors.Join(errs...)
}

// startWorker starts exe as a worker with args, the leader of a new
// process group, killed if this process dies first.
func startWorker(exe string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), WorkerEnv+"=1")
	cmd.SysProcAttr = workerAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s %v: %w", exe, args, err)
	}
	return cmd, nil
}
