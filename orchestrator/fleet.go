package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// MaxLoadStrikes is how many launches in a row may fail to load on one host
// of a fleet, each of a scenario whose server did load on another host,
// before the host is given up on: one such failure can be the server's bad
// luck, two in a row point at the host.
const MaxLoadStrikes = 2

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
	// unreachable that it no longer answered, so nothing on it can be
	// stopped or released.
	lost        string
	unreachable bool
	last        *scenarioRun // the newest launch it ran, for --keep-server
}

func (o *orch) newWorker(h remote.Host) *worker {
	w := &worker{o: o, h: h, paths: newHostPaths(HostWorkdir(o.c.Host.Workdir, h.Name()))}
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
		if err := w.campaignPhase(ctx, "lock", w.acquire); err != nil {
			return err
		}
		if err := w.campaignPhase(ctx, "prepare", w.prepare); err != nil {
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
			if err := w.campaignPhase(ctx, "lock", w.acquire); err != nil {
				w.lose(0, "locking: "+err.Error())
				return
			}
			if err := w.campaignPhase(ctx, "prepare", w.prepare); err != nil {
				w.lose(0, "preparing: "+err.Error())
				w.release(ctx)
			}
		}()
	}
	wg.Wait()
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
		w.o.warn("", fmt.Sprintf("%s is unreachable: its lock %s stays until a later campaign from this machine takes it over",
			w.h.Name(), lock.path))
		return
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTeardownTimeout)
	defer cancel()
	if err := lock.release(tctx); err != nil {
		w.o.warn("", err.Error())
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

// roundJob is one round to place on a host: its launches in order, those
// this invocation runs, and where it must or may go.
type roundJob struct {
	round    int
	launches []plannedLaunch
	run      map[LaunchKey]bool
	// home is the host the round must run on ("" for any): the one its
	// counted launches ran on, in a resumed fleet run.
	home string
	// whole says every launch of the round that counts runs again, so that
	// all of them share the host it now runs on (it moved, or its home is
	// not in this fleet).
	whole bool
	from  []string // hosts it was moved away from
}

// scheduler hands rounds to hosts: a host that is free takes the first
// round homed to it, else the first round homed nowhere. A lost host's
// round goes back to the front of the queue, to be run whole elsewhere.
type scheduler struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*roundJob
	running int
	lost    map[string]bool
	stopped bool
}

func newScheduler(jobs []*roundJob) *scheduler {
	s := &scheduler{queue: jobs, lost: map[string]bool{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// next returns the round host runs next, waiting while rounds it may not
// take are queued or others are still running (a host lost meanwhile
// hands its round back); nil when nothing is left for it or after stop.
func (s *scheduler) next(host string) *roundJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.stopped || s.lost[host] {
			return nil
		}
		i := slices.IndexFunc(s.queue, func(j *roundJob) bool { return j.home == host })
		if i < 0 {
			i = slices.IndexFunc(s.queue, func(j *roundJob) bool { return j.home == "" })
		}
		if i >= 0 {
			j := s.queue[i]
			s.queue = slices.Delete(s.queue, i, i+1)
			s.running++
			return j
		}
		if len(s.queue) == 0 && s.running == 0 {
			return nil
		}
		s.cond.Wait()
	}
}

// done ends a round taken with next.
func (s *scheduler) done(*roundJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	s.cond.Broadcast()
}

// lose gives host up: the round it was running (j, nil if none) and those
// homed to it go to the front of the queue for any other host, to be run
// whole there.
func (s *scheduler) lose(host string, j *roundJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost[host] = true
	for _, q := range s.queue {
		if q.home == host {
			q.home, q.whole = "", true
		}
	}
	if j != nil {
		s.running--
		j.home, j.whole = "", true
		j.from = append(j.from, host)
		s.queue = slices.Insert(s.queue, 0, j)
	}
	s.cond.Broadcast()
}

// stop hands out no more rounds.
func (s *scheduler) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.cond.Broadcast()
}

// left returns the rounds still queued.
func (s *scheduler) left() []*roundJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.queue)
}

// planRounds lays the campaign out as rounds to place. In a resumed fleet
// run a round goes back to the host it last ran on (its home) when that
// host is in the fleet; a launch counts as finished only if it finished
// there. A round whose home is not in the fleet (or is lost) and that has
// launches to run is run whole elsewhere, so its counted launches share a
// host.
func (o *orch) planRounds() []*roundJob {
	var jobs []*roundJob
	for k := 1; k <= len(o.man.Order); k++ {
		j := &roundJob{round: k, run: map[LaunchKey]bool{}}
		home := o.homes[k]
		usable := home != "" && slices.ContainsFunc(o.workers, func(w *worker) bool { return w.h.Name() == home && w.lost == "" })
		counted := false
		for _, pl := range o.launches {
			if pl.key.Round != k {
				continue
			}
			j.launches = append(j.launches, pl)
			h := ""
			if usable {
				h = home
			}
			if o.needsRun(pl.key, h) {
				j.run[pl.key] = true
			}
			counted = counted || o.finished[pl.key] != ""
		}
		switch {
		case usable && len(j.run) > 0:
			j.home = home
		case home != "" && counted && len(j.run) > 0:
			j.whole = true
			j.from = []string{home}
			o.warn("", fmt.Sprintf("round %d ran on %s, which is not in this fleet: it runs again whole on another host, so its launches share one host",
				k, home))
		}
		for _, pl := range j.launches {
			if j.run[pl.key] {
				o.lastPos = max(o.lastPos, pl.pos)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// readPlacement reads, from a resumed run's journal, the host of each
// launch's finished attempt, each round's home (the host of its newest
// launch: fleet journals name it), and the durations of the finished
// launches.
func (o *orch) readPlacement(entries []JournalEntry) {
	for _, e := range entries {
		if e.Phase != PhaseScenario || e.Scenario == "" {
			continue
		}
		switch {
		case e.Event == "start" && e.Host != "" && o.fleet:
			o.homes[e.launch().Round] = e.Host
		case e.Event == "end" && (e.Outcome == OutcomeOK || e.Outcome == OutcomeFailed):
			o.finishedOn[e.launch()] = e.Host
			o.launchSecs = append(o.launchSecs, e.DurationS)
		}
	}
}

// needsRun reports whether a launch runs in this invocation: in --round's
// round (when given) and named by --only (when given); without either,
// when not already finished in a resumed run (on home, when the round has
// one).
func (o *orch) needsRun(k LaunchKey, home string) bool {
	if o.opt.Round > 0 && k.Round != o.opt.Round {
		return false
	}
	if len(o.opt.Only) > 0 {
		return slices.Contains(o.opt.Only, k.Scenario)
	}
	if o.opt.Round > 0 {
		return true
	}
	return o.finished[k] == "" || (home != "" && o.finishedOn[k] != home)
}

// runs reports whether the job runs launch k: planned, or counted when the
// round runs whole.
func (o *orch) runs(j *roundJob, k LaunchKey) bool {
	if j.run[k] {
		return true
	}
	if !j.whole {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.finished[k] != ""
}

// schedule runs the rounds on the hosts until every round is done, the
// context ends, the campaign stops, or no host is left.
func (o *orch) schedule(ctx context.Context) {
	sched := newScheduler(o.planRounds())
	for _, w := range o.workers {
		if w.lost != "" {
			sched.lose(w.h.Name(), nil)
		}
	}
	stop := context.AfterFunc(ctx, sched.stop)
	defer stop()
	var wg sync.WaitGroup
	for _, w := range o.workers {
		if w.lost != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.work(ctx, w, sched)
		}()
	}
	wg.Wait()
	left := sched.left()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(left) == 0 || o.outcome.Canceled || o.outcome.Stopped != "" {
		return
	}
	if ctx.Err() != nil {
		o.outcome.Canceled = true // stopped between rounds
		return
	}
	var rounds []string
	for _, j := range left {
		rounds = append(rounds, fmt.Sprint(j.round))
	}
	o.outcome.Stopped = fmt.Sprintf("every host of the fleet was lost; round %s not run", strings.Join(rounds, ", "))
}

// work is one host's loop: take a round, run it, until none is left for it.
func (o *orch) work(ctx context.Context, w *worker, sched *scheduler) {
	for {
		j := sched.next(w.h.Name())
		if j == nil {
			return
		}
		if ctx.Err() != nil {
			o.setCanceled()
			sched.done(j)
			sched.stop()
			return
		}
		if !o.fits(j) {
			sched.done(j)
			continue
		}
		if o.toRun(j) > 0 {
			o.place(j, w)
		}
		lost, stop := o.runRound(ctx, w, j)
		if lost != "" {
			w.lose(j.round, lost)
			sched.lose(w.h.Name(), j)
			if !w.unreachable {
				w.release(ctx)
			}
			return
		}
		sched.done(j)
		if stop {
			sched.stop()
			return
		}
	}
}

// runRound runs the launches of j on w in order. It returns why w was lost
// ("" if it was not), and whether the campaign must stop (canceled, or the
// results can no longer be written).
func (o *orch) runRound(ctx context.Context, w *worker, j *roundJob) (lost string, stop bool) {
	for _, pl := range j.launches {
		if ctx.Err() != nil {
			o.setCanceled()
			return "", true
		}
		if !o.runs(j, pl.key) {
			o.mu.Lock()
			fin := o.finished[pl.key]
			if fin != "" {
				o.outcome.Skipped = append(o.outcome.Skipped, pl.key)
			}
			o.mu.Unlock()
			if fin != "" {
				o.emit(Event{Time: o.now(), Kind: EventScenarioSkip, Scenario: pl.key.Scenario, Round: pl.key.Round,
					Rounds: len(o.man.Order), Index: pl.pos + 1, Total: len(o.launches), Outcome: fin, Host: w.tag})
			}
			continue
		}
		sr := o.newScenarioRun(pl, w)
		res := o.runScenario(ctx, sr)
		w.last = sr
		o.mu.Lock()
		o.outcome.Results = append(o.outcome.Results, res)
		if res.Status == results.StatusFailed {
			o.outcome.Failed++
		}
		o.mu.Unlock()
		if sr.hostLost != "" {
			return sr.hostLost, false
		}
		if res.Status == results.StatusPending {
			o.setCanceled()
			return "", true
		}
		if err := o.storageFailure(); err != nil {
			o.mu.Lock()
			first := o.outcome.Stopped == ""
			if first {
				o.outcome.Stopped = fmt.Sprintf("results can no longer be written to %s: %v", o.runDir, err)
			}
			msg := o.outcome.Stopped
			o.mu.Unlock()
			if first {
				o.warn("", "stopping the campaign: "+msg)
			}
			return "", true
		}
	}
	return "", false
}

func (o *orch) setCanceled() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outcome.Canceled = true
}

// place records that j runs on w (a fleet's end report says where rounds
// ran).
func (o *orch) place(j *roundJob, w *worker) {
	if !o.fleet {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outcome.Placements = slices.DeleteFunc(o.outcome.Placements, func(p RoundPlacement) bool { return p.Round == j.round })
	o.outcome.Placements = append(o.outcome.Placements, RoundPlacement{Round: j.round, Host: w.h.Name(), From: slices.Clone(j.from)})
}

// toRun is how many launches j runs.
func (o *orch) toRun(j *roundJob) int {
	n := 0
	for _, pl := range j.launches {
		if o.runs(j, pl.key) {
			n++
		}
	}
	return n
}

// fits reports whether j can end before Options.Deadline, by its estimate;
// a round that cannot is reported (EventRoundOutOfTime, Outcome.OutOfTime)
// and not started.
func (o *orch) fits(j *roundJob) bool {
	if o.opt.Deadline.IsZero() {
		return true
	}
	n := o.toRun(j)
	if n == 0 {
		return true
	}
	per, basis := o.launchEstimate()
	est := time.Duration(n) * per
	now := o.now()
	if !now.Add(est).After(o.opt.Deadline) {
		return true
	}
	o.mu.Lock()
	o.outcome.OutOfTime = append(o.outcome.OutOfTime, j.round)
	o.mu.Unlock()
	o.emit(Event{Time: now, Kind: EventRoundOutOfTime, Round: j.round, Rounds: len(o.man.Order),
		Message: fmt.Sprintf("round %d not started: %d launches × %s (%s) would end after %s, %s from now",
			j.round, n, per.Round(time.Second), basis, o.opt.Deadline.UTC().Format(time.RFC3339),
			o.opt.Deadline.Sub(now).Round(time.Second))})
	return false
}

// AssumedStreamTokS is the decode speed of one request stream the deadline
// estimate assumes before any launch of the run has been measured: the slow
// end of what serving engines reach per stream under load (a large model at
// high concurrency decodes some 20–40 tokens/s per request). Assuming slow
// errs on the side that costs little: a round left out for time is named
// with the resume command, while one started that cannot end loses its
// launches to the allocation's end.
const AssumedStreamTokS = 20.0

// launchEstimate is how long one launch is expected to take: the mean of
// the run's finished launches, or, before any has finished, the campaign's
// bound on a launch's waits (what `bakeoff validate` calls "waits at most")
// plus its sweep's expected length (sweepEstimate). The sweep must count:
// with minutes of load per level, a first round estimated from the waits
// alone starts in an allocation that ends long before its sweeps do.
func (o *orch) launchEstimate() (time.Duration, string) {
	o.mu.Lock()
	secs := slices.Clone(o.launchSecs)
	o.mu.Unlock()
	if len(secs) > 0 {
		sum := 0.0
		for _, s := range secs {
			sum += s
		}
		return time.Duration(sum / float64(len(secs)) * float64(time.Second)), fmt.Sprintf("the mean of %d finished launches", len(secs))
	}
	c := o.c
	d := c.Engine.HealthTimeout + 2*c.GPU.WaitTimeout + c.Engine.StopGrace + sweepEstimate(c.Sweep)
	return d, fmt.Sprintf("no launch finished yet: the campaign's bound on loading and GPU waits, and its sweep at %g tokens/s per request",
		AssumedStreamTokS)
}

// sweepEstimate is how long a sweep is expected to take before any has
// been measured: each request's tokens at AssumedStreamTokS, the warm-up's
// one after another; a closed-loop level sends its requests in waves of its
// concurrency, an open-loop level over its arrival schedule plus its last
// request's own length. Every level counts as many times as it is repeated.
func sweepEstimate(s campaign.Sweep) time.Duration {
	tokens, _ := s.OutputTokens()
	request := tokens / AssumedStreamTokS // seconds
	secs := float64(s.Warmup) * request
	for _, lv := range s.Levels() {
		n := s.RequestsAt(lv)
		level := 0.0
		if measure.IsRate(lv) {
			level = float64(n-1)/lv.Rate + request
		} else {
			c := max(lv.Concurrency, 1)
			level = float64((n+c-1)/c) * request
		}
		secs += level * float64(max(s.Repeats, 1))
	}
	return time.Duration(secs * float64(time.Second))
}

// finishOutcome puts the outcome's lists in launch and round order.
func (o *orch) finishOutcome() {
	o.mu.Lock()
	defer o.mu.Unlock()
	pos := map[LaunchKey]int{}
	for _, pl := range o.launches {
		pos[pl.key] = pl.pos
	}
	out := &o.outcome
	sort.SliceStable(out.Results, func(a, b int) bool {
		return pos[LaunchKey{out.Results[a].Name, out.Results[a].RoundOf()}] < pos[LaunchKey{out.Results[b].Name, out.Results[b].RoundOf()}]
	})
	sort.SliceStable(out.Skipped, func(a, b int) bool { return pos[out.Skipped[a]] < pos[out.Skipped[b]] })
	sort.SliceStable(out.Placements, func(a, b int) bool { return out.Placements[a].Round < out.Placements[b].Round })
	slices.Sort(out.OutOfTime)
}

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
	case "stop-old", "gpu-free":
		return fmt.Sprintf("%s failed before %s could launch: %s", se.Phase, s.sc.Name, firstLine(se.Reason))
	case "launch", "ready":
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
