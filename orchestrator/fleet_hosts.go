package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// worker is one host of the campaign and everything the lifecycle keeps
// about it. In a fleet each worker runs rounds in its own goroutine; its
// fields are its own, apart from o's shared state.
type worker struct {
	o *orch
	h remote.Host
	// tag is the host's name in journal lines and events: h.Name() in a
	// fleet, "" for a single host, whose lines stay as they always were.
	tag   string
	paths hostPaths
	// hostBakeoff is the bakeoff binary as the host sees it; sweepOnHost says
	// whether the sweep runs there (else through the tunnel).
	hostBakeoff string
	sweepOnHost bool
	lock        *hostLock
	facts       results.HostFacts
	// strikes counts the launches in a row that failed to load here while
	// loading on another host.
	strikes int
	// lost says why the fleet gave the host up ("" while it is usable);
	// unreachable that the watcher gave it up (it no longer answers, or
	// what held it ended), so nothing on it can be stopped or released.
	lost        string
	unreachable bool
	last        *scenarioRun // the newest launch it ran, for --keep-server
	// group are the hosts a launch on this worker runs on, this one first
	// (deployment_hosts.go): itself alone unless a deployment spans
	// several nodes. slot is the share of its hosts a launch here gets
	// when launches share a host; addr the address the other hosts of the
	// group reach this one at.
	group []*worker
	slot  campaign.Slot
	addr  string
	// leader is the host whose group this one is a node of (nil when it
	// leads its own); spare says why a host left over runs nothing.
	leader *worker
	spare  string
	// slotID names the worker when it is one slot of a host shared by
	// launches side by side (slots.go); base is the host's first slot,
	// which holds its lock.
	slotID string
	base   *worker
}

func (o *orch) newWorker(h remote.Host) *worker {
	w := &worker{o: o, h: h, paths: newHostPaths(HostWorkdir(o.c.Host.Workdir, h.Name()))}
	w.group = []*worker{w}
	if o.fleet {
		w.tag = h.Name()
	}
	return w
}

// HostWorkdir is the workdir on the host named host: workdir with each
// "{host}" replaced by the host's name (characters other than letters,
// digits, '.', '_' and '-' as '_'), so that hosts that share a filesystem
// (NFS homes, namespace test hosts) keep their locks and pid files apart.
func HostWorkdir(workdir, host string) string {
	if !strings.Contains(workdir, "{host}") {
		return workdir
	}
	safe := []byte(host)
	for i, c := range safe {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			safe[i] = '_'
		}
	}
	return strings.ReplaceAll(workdir, "{host}", string(safe))
}

// startHosts locks and prepares the hosts. A single host that cannot be
// locked or prepared stops the campaign, as the error; a host of a fleet is
// given up on instead, and only a fleet with no host left is an error.
func (o *orch) startHosts(ctx context.Context) error {
	if !o.fleet {
		w := o.workers[0]
		if err := w.campaignPhase(ctx, StepLock, w.acquire); err != nil {
			return err
		}
		if err := w.campaignPhase(ctx, StepPrepare, w.prepare); err != nil {
			o.releaseLocks(ctx)
			return err
		}
		return nil
	}
	var wg sync.WaitGroup
	for _, w := range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.campaignPhase(ctx, StepLock, w.acquire); err != nil {
				w.lose(0, "locking: "+err.Error())
				return
			}
			if err := w.campaignPhase(ctx, StepPrepare, w.prepare); err != nil {
				w.lose(0, "preparing: "+err.Error())
				w.release(ctx)
			}
		}()
	}
	wg.Wait()
	o.loseBrokenGroups(ctx)
	// A host that could not even be connected is lost before its first
	// round, as one that cannot be locked is: the journal, the manifest and
	// the end report say so, where a night's run is read the next morning.
	for _, u := range o.opt.Unreachable {
		o.hostLost(u.Host, 0, u.Reason)
	}
	var errs []error
	var first *worker
	for _, w := range o.workers {
		if w.lost != "" {
			errs = append(errs, fmt.Errorf("%s: %s", w.h.Name(), w.lost))
		} else if first == nil {
			first = w
		}
	}
	for _, u := range o.opt.Unreachable {
		errs = append(errs, fmt.Errorf("%s: %s", u.Host, u.Reason))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if first != nil {
		o.man.Host = first.facts
	}
	o.recordFleet()
	if err := o.writeManifest(); err != nil {
		return err
	}
	if first == nil {
		return fmt.Errorf("no host of the fleet can be used:\n%w", errors.Join(errs...))
	}
	return nil
}

// recordFleet puts into the manifest, in the order of hosts:, every host
// of this invocation's fleet: its facts, or why it was left out. Entries of
// hosts this invocation did not try (a resumed run's earlier fleet) stay.
// o.mu must be held.
func (o *orch) recordFleet() {
	var now []results.FleetHost
	for _, w := range o.workers {
		fh := results.FleetHost{Host: w.h.Name(), LeftOut: w.lost}
		if w.facts.OS != "" { // its platform, the first fact prepare reads, was read
			facts := w.facts
			fh.Facts = &facts
		}
		now = append(now, fh)
	}
	for _, u := range o.opt.Unreachable {
		now = append(now, results.FleetHost{Host: u.Host, LeftOut: u.Reason})
	}
	pos := func(name string) int {
		if i := slices.IndexFunc(o.c.Hosts, func(h campaign.Host) bool { return h.SSH == name }); i >= 0 {
			return i
		}
		return len(o.c.Hosts)
	}
	slices.SortStableFunc(now, func(a, b results.FleetHost) int { return pos(a.Host) - pos(b.Host) })
	for _, fh := range now {
		if !slices.Contains(o.man.Hosts, fh.Host) {
			o.man.Hosts = append(o.man.Hosts, fh.Host)
		}
		i := slices.IndexFunc(o.man.Fleet, func(old results.FleetHost) bool { return old.Host == fh.Host })
		if i < 0 {
			o.man.Fleet = append(o.man.Fleet, fh)
			continue
		}
		if fh.Facts == nil {
			fh.Facts = o.man.Fleet[i].Facts // what it measured earlier ran on these
		}
		o.man.Fleet[i] = fh
	}
}

// acquire takes the host lock in the host's workdir.
func (w *worker) acquire(ctx context.Context) error {
	o := w.o
	lock, err := acquireLock(ctx, w.h, w.paths.workdir, LockInfo{Machine: o.opt.Machine, PID: o.opt.PID,
		Started: o.now().UTC(), Campaign: o.c.Name, RunDir: o.runDir}, o.opt.PIDAlive)
	w.lock = lock
	return err
}

// release gives the host lock back, unless the host can no longer be
// reached: then the lock stays, and a later campaign from this machine takes
// it over once this process has ended (docs/ARCHITECTURE.md, Host lock).
func (w *worker) release(ctx context.Context) {
	if w.lock == nil {
		return
	}
	lock := w.lock
	w.lock = nil
	if w.unreachable {
		w.warn("", fmt.Sprintf("%s is unreachable: its lock %s stays until a later campaign from this machine takes it over",
			w.h.Name(), lock.path))
		return
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTeardownTimeout)
	defer cancel()
	if err := lock.release(tctx); err != nil {
		w.warn("", err.Error())
	}
}

// releaseLocks releases every lock still held, each host at once.
func (o *orch) releaseLocks(ctx context.Context) {
	var wg sync.WaitGroup
	for _, w := range o.workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.release(ctx) }()
	}
	wg.Wait()
}

// lose gives the host up: journaled (a PhaseHost line), reported, and
// listed in the outcome.
func (w *worker) lose(round int, reason string) {
	w.lost = reason
	w.o.hostLost(w.h.Name(), round, reason)
}

// hostLost records that the fleet gave host up during round (0: before
// its first): a PhaseHost line, an EventHostLost, an entry of Outcome.Lost.
func (o *orch) hostLost(host string, round int, reason string) {
	now := o.now()
	o.journal(JournalEntry{Time: now, Phase: PhaseHost, Event: HostLost, Outcome: OutcomeFailed, Host: host,
		Round: round, Error: reason})
	o.emit(Event{Time: now, Kind: EventHostLost, Host: host, Round: round, Rounds: len(o.man.Order), Message: reason})
	o.mu.Lock()
	o.outcome.Lost = append(o.outcome.Lost, HostLoss{Host: host, Round: round, Reason: reason})
	o.mu.Unlock()
}
