// Package orchestrator runs a campaign: for each scenario, the lifecycle of
// shared phases (stop what runs, wait for GPU memory, launch, wait for ready,
// smoke, sweep, collect, stop), with a journal that makes a killed run
// resumable, a host lock, failure isolation and progress events. It never
// prints: the CLI draws the events it emits.
package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Defaults for Options fields left zero.
const (
	// DefaultResultsRoot is where runs go: ROOT/CAMPAIGN/RUN.
	DefaultResultsRoot = "results"
	// DefaultTeardownTimeout bounds the stop and GPU wait that run after a
	// failure or Ctrl-C, so a wedged host cannot keep the process forever.
	DefaultTeardownTimeout = 5 * time.Minute
	// DefaultMaxFailedFraction is the share of failed requests in one level
	// above which a scenario's sweep counts as failed.
	DefaultMaxFailedFraction = 0.2
	// RunIDFormat names a run directory: its UTC start time.
	RunIDFormat = "20060102T150405Z"
)

// Options says what to run and where results go.
type Options struct {
	Campaign *campaign.Campaign
	// NoisePrior is the host's noise profile the run starts with, kept in
	// the manifest so that every look and every later report lends it the
	// same way (package noise, verdict/prior.go); nil for none. A resumed
	// run keeps the one it started with.
	NoisePrior *results.NoisePrior
	// Host is the connected host the servers run on: this machine, an SSH
	// host, or a remote.Dry that records what a run would do.
	Host remote.Host
	// Hosts is a fleet: when non-empty it replaces Host. Each round runs
	// whole on one host; hosts take the next unstarted round when free; a
	// host that fails loses its round to another host (docs/ARCHITECTURE.md,
	// The fleet).
	Hosts []remote.Host
	// Unreachable are the hosts of the fleet that could not be connected
	// when the campaign started (Host: the name, Reason: why; Round 0).
	// They run nothing and are recorded as lost before their first round,
	// like a host that cannot be locked: a journal line each, their reason
	// in the manifest's Fleet, and Outcome.Lost. A campaign with Unreachable
	// is a fleet, even when Hosts is empty (then it fails, after recording
	// them).
	Unreachable []HostLoss
	// Deadline, when not zero, is when the hosts stop being usable (a Slurm
	// allocation's end). A round is not started on a host unless its
	// estimated duration ends before Deadline; rounds left out are reported
	// in Outcome.OutOfTime.
	Deadline time.Time
	// Watch says whether a host of a fleet whose launch failed is lost (the
	// placement that acquired the hosts); nil takes every host to be there,
	// so a host is then lost only by what its launches say (docs/
	// ARCHITECTURE.md, The fleet).
	Watch Watcher
	// Bakeoff is this machine's bakeoff binary: launched as the engine for
	// "{bakeoff}" and as the sweep on a local host, uploaded to a remote one.
	Bakeoff string
	// Version is bakeoff's version, recorded in the manifest.
	Version string

	// ResultsRoot holds runs as ROOT/CAMPAIGN/RUN (DefaultResultsRoot).
	ResultsRoot string
	// OutDir, when set, is the run directory itself (it must not hold a run).
	OutDir string
	// ResumeDir continues the run in that directory: launches the journal
	// shows finished are skipped, unless selected by Only or Round.
	ResumeDir string
	// Only limits the campaign to these scenarios, in every round. With
	// ResumeDir their launches are run again even if finished, the earlier
	// attempt kept under SCENARIO/round-K/history/.
	Only []string
	// Round, when not 0, limits the campaign to that round (1-based). With
	// ResumeDir its launches are run again even if finished.
	Round int

	// Look, for a sequential campaign, decides before each round past
	// rounds.min which variants are still open (sequential.go); nil runs
	// every round whole.
	Look LookFunc

	// KeepServer leaves the last scenario's server running at the end.
	KeepServer bool
	// MaxFailedFraction overrides DefaultMaxFailedFraction.
	MaxFailedFraction float64

	// Events receives progress; nil drops it. With a fleet, events come from
	// one goroutine per host, one at a time.
	Events func(Event)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Machine and PID identify this orchestrator in the host lock.
	Machine string
	PID     int
	// PIDAlive reports whether a process on this machine is alive; it
	// decides whether a lock left by an earlier orchestrator is stale.
	PIDAlive func(pid int) bool
	// Allocation, when set, is written to the manifest
	// (results.Manifest.Allocation) and journaled (campaign-level entry,
	// phase "allocation"), so --resume can reattach to it.
	Allocation *results.Allocation
}

// Outcome is what a campaign run produced.
type Outcome struct {
	RunDir   string
	Results  []results.ScenarioResult // this invocation's attempts, in launch order
	Skipped  []LaunchKey              // finished earlier in a resumed run
	Failed   int
	Canceled bool // stopped by the context (Ctrl-C); resume to finish
	// Stopped says why the campaign stopped on its own before the end (the
	// local results could no longer be written, every host of the fleet was
	// lost); resume to finish.
	Stopped string
	// OutOfTime lists the rounds not started because their estimated
	// duration would have ended after Options.Deadline, in order.
	OutOfTime []int
	// Placements says where each round this invocation ran went, in round
	// order (with a fleet; empty for a single host).
	Placements []RoundPlacement
	// Lost lists the hosts of the fleet given up on, in the order they were.
	Lost    []HostLoss
	Journal []JournalEntry
}

// RoundPlacement is the host a round ran on, and the hosts it was moved
// away from before (each lost during it).
type RoundPlacement struct {
	Round int
	Host  string
	From  []string
}

// HostLoss is a host of the fleet given up on: why, and during which round
// (0 when it was lost before running any).
type HostLoss struct {
	Host   string
	Round  int
	Reason string
}

// Run runs the campaign. A scenario that fails is recorded and the campaign
// goes on; the returned error is for what stops the whole campaign (bad
// options, a held lock, an unwritable results directory; with a fleet, only
// when no host could be locked and prepared).
func Run(ctx context.Context, opt Options) (*Outcome, error) {
	o, err := newOrch(opt)
	if err != nil {
		return nil, err
	}
	return o.run(ctx)
}

// orch is one campaign run in progress. With a fleet, one goroutine per host
// runs rounds; mu guards what they share.
type orch struct {
	opt  Options
	c    *campaign.Campaign
	now  func() time.Time
	emit func(Event)
	// parts is the replicate of each results round when the rounds are
	// split over a fleet (the manifest's Replicates, fixed once laid out);
	// nil otherwise.
	parts []int
	// workers are the campaign's hosts: one, or the fleet in its order.
	workers []*worker
	// fleet is true when Options.Hosts was given: journal lines and events
	// then name their host, and a failing host loses its round.
	fleet        bool
	linkPatience time.Duration
	runDir       string
	jr           *Journal
	// launches is the campaign's launch sequence: every round's scenarios in
	// the manifest's order.
	launches []plannedLaunch
	// homes is, in a resumed fleet run, the host each round last ran on.
	homes map[int]string
	// lastPos is the position of the last launch this invocation plans to
	// run (--keep-server keeps its server); -1 when none.
	lastPos int
	// looks are a sequential campaign's looks, by the replicate they gate;
	// lookMu makes the parts of one replicate wait for its one look.
	lookMu sync.Mutex
	looks  map[int]takenLook

	mu  sync.Mutex // guards the fields below
	man results.Manifest
	sum results.Summary
	// attempts holds the newest attempt number per launch.
	attempts map[LaunchKey]int
	// finished is each launch's newest ok or failed outcome, and finishedOn
	// the host that attempt ran on ("" when the journal did not say).
	finished   map[LaunchKey]string
	finishedOn map[LaunchKey]string
	// launchSecs are the durations of the run's finished launches, for the
	// deadline's estimate.
	launchSecs []float64
	// loaded is, per scenario, the hosts its server became ready on.
	loaded  map[string]map[string]bool
	outcome Outcome
	// storageErr is the first local write that failed for lack of space or
	// a read-only disk: every later scenario would be measured for nothing.
	storageErr error
	// warned are the warnings emitted once per campaign (warnOnce).
	warned map[string]bool
	// deployments says a scenario of the campaign is a deployment: every
	// launch's stop-old then also stops what the role pid files name.
	deployments bool
}

func newOrch(opt Options) (*orch, error) {
	if opt.Campaign == nil {
		return nil, errors.New("orchestrator: no campaign")
	}
	if opt.ResumeDir != "" && opt.OutDir != "" {
		return nil, errors.New("--out and --resume are exclusive: a resumed run stays in its directory")
	}
	o := &orch{opt: opt, c: opt.Campaign, now: opt.Now}
	for _, sc := range o.c.Scenarios {
		o.deployments = o.deployments || sc.Deployment != nil
	}
	if o.now == nil {
		o.now = time.Now
	}
	emit := opt.Events
	if emit == nil {
		emit = func(Event) {}
	}
	var emitMu sync.Mutex
	o.emit = func(e Event) {
		emitMu.Lock()
		defer emitMu.Unlock()
		// The look's Round is already a replicate; every other event's is
		// a results round, a part when the rounds are split.
		if e.Kind != EventLook && e.Round > 0 && e.Round <= len(o.parts) {
			e.Replicate, e.Rounds = o.parts[e.Round-1], o.parts[len(o.parts)-1]
		}
		emit(e)
	}
	if o.opt.PIDAlive == nil {
		o.opt.PIDAlive = pidAlive
	}
	if o.opt.MaxFailedFraction == 0 {
		o.opt.MaxFailedFraction = DefaultMaxFailedFraction
	}
	if o.opt.ResultsRoot == "" {
		o.opt.ResultsRoot = DefaultResultsRoot
	}
	o.linkPatience = o.c.Host.LinkPatience
	if o.linkPatience <= 0 {
		o.linkPatience = DefaultLinkPatience
	}
	hosts := opt.Hosts
	// Launches side by side on a host are placed as a fleet's are, each
	// slot taking rounds of its own.
	o.fleet = len(hosts) > 0 || len(opt.Unreachable) > 0 || o.c.LaunchesPerHost > 1
	if len(hosts) == 0 && len(opt.Unreachable) == 0 {
		hosts = []remote.Host{opt.Host}
	}
	seen := map[string]bool{}
	for _, u := range o.opt.Unreachable {
		seen[u.Host] = true
	}
	for _, h := range hosts {
		if h == nil {
			return nil, errors.New("orchestrator: no host")
		}
		if seen[h.Name()] {
			return nil, fmt.Errorf("orchestrator: host %s given twice", h.Name())
		}
		seen[h.Name()] = true
		o.workers = append(o.workers, o.newWorker(h))
	}
	o.groupHosts()
	for _, name := range opt.Only {
		if !slices.ContainsFunc(o.c.Scenarios, func(s *campaign.Scenario) bool { return s.Name == name }) {
			return nil, fmt.Errorf("--only: no scenario %q in campaign %s", name, o.c.Name)
		}
	}
	if opt.Round < 0 || opt.Round > max(o.c.Rounds, 1) {
		return nil, fmt.Errorf("--round %d: campaign %s has rounds 1 to %d", opt.Round, o.c.Name, max(o.c.Rounds, 1))
	}
	return o, nil
}

func (o *orch) run(ctx context.Context) (*Outcome, error) {
	if err := o.openRun(); err != nil {
		return nil, err
	}
	if o.jr != nil {
		defer o.jr.Close()
	}
	o.outcome.RunDir = o.runDir
	start := Event{Time: o.now(), Kind: EventCampaignStart, RunDir: o.runDir, Total: len(o.launches),
		Rounds: len(o.man.Order), Message: o.hostNames(), Hosts: len(o.workers)}
	if o.man.Split() {
		start.Rounds, start.Parts = o.replicates(), len(o.man.Order)
	}
	o.emit(start)

	if err := o.startHosts(ctx); err != nil {
		return nil, err
	}
	o.addSlots()
	defer o.releaseLocks(ctx)
	// Before any launch: a flag the engine refuses would otherwise be found
	// at its scenario's first launch, hours into the night.
	if err := o.preflight(ctx); err != nil {
		return nil, err
	}

	o.schedule(ctx)

	var last *scenarioRun
	for _, w := range o.workers {
		if w.last != nil && (last == nil || w.last.pos > last.pos) {
			last = w.last
		}
	}
	if o.opt.KeepServer && last != nil && last.keptServer {
		if last.dep != nil {
			o.warn("", fmt.Sprintf("the processes of %s left running (--keep-server); pid files %s", last.sc.Name, last.dep.pidFiles()))
		} else {
			o.warn("", fmt.Sprintf("server of %s left running on %s (--keep-server); pid file %s",
				last.sc.Name, last.w.h.Name(), last.w.paths.serverPID))
		}
	}
	o.finishOutcome()
	if o.jr != nil {
		entries, err := ReadJournal(filepath.Join(o.runDir, results.JournalFile))
		if err != nil {
			return nil, err
		}
		o.outcome.Journal = entries
	}
	o.emit(Event{Time: o.now(), Kind: EventCampaignEnd, RunDir: o.runDir})
	return &o.outcome, nil
}

// firstHostName names the manifest's host until its facts are read: the
// first connected host, or the first of a fleet none of which could be.
func (o *orch) firstHostName() string {
	if len(o.workers) > 0 {
		return o.workers[0].h.Name()
	}
	return o.opt.Unreachable[0].Host
}

// hostNames names the campaign's hosts for the start event: those it
// connected, or, when it could connect none, those it could not.
func (o *orch) hostNames() string {
	var names []string
	for _, w := range o.workers {
		names = append(names, w.h.Name())
	}
	if len(names) == 0 {
		for _, u := range o.opt.Unreachable {
			names = append(names, u.Host)
		}
	}
	return strings.Join(names, ", ")
}

// plannedLaunch is one entry of the campaign's launch sequence.
type plannedLaunch struct {
	key LaunchKey
	sc  *campaign.Scenario
	pos int // 0-based position in the sequence
}

// layout is the campaign's launch sequence: a fleet with more hosts than
// rounds splits each round into parts when that shortens the night
// (campaign.SplitLayout); otherwise every round whole, in LaunchOrder.
func (o *orch) layout() ([][]string, []int) {
	if !o.fleet {
		return o.c.Order(), nil
	}
	l := o.c.Layout(o.leaders() * max(o.c.LaunchesPerHost, 1))
	return l.Order, l.Replicates
}

// planLaunches lays the rounds of the manifest's order end to end.
func (o *orch) planLaunches() {
	o.parts = slices.Clone(o.man.Replicates)
	byName := map[string]*campaign.Scenario{}
	for _, sc := range o.c.Scenarios {
		byName[sc.Name] = sc
	}
	o.launches = nil
	for k, row := range o.man.Order {
		for _, name := range row {
			o.launches = append(o.launches, plannedLaunch{key: LaunchKey{name, k + 1}, sc: byName[name],
				pos: len(o.launches)})
		}
	}
}

// campaignPhase runs a host-level phase (lock, prepare) with its journal
// lines; in a fleet they name the host.
func (w *worker) campaignPhase(ctx context.Context, name StepName, fn func(context.Context) error) error {
	o := w.o
	start := o.now()
	o.journal(JournalEntry{Time: start, Phase: string(name), Event: "start", Host: w.tag})
	o.emit(Event{Time: start, Kind: EventPhaseStart, Phase: name, Host: w.tag})
	err := fn(ctx)
	end := o.now()
	outcome := outcomeOf(ctx, err)
	e := JournalEntry{Time: end, Phase: string(name), Event: "end", Outcome: outcome, DurationS: end.Sub(start).Seconds(), Host: w.tag}
	if err != nil {
		e.Error = err.Error()
	}
	o.journal(e)
	o.emit(Event{Time: end, Kind: EventPhaseEnd, Phase: name, Outcome: outcome, Duration: end.Sub(start), Err: err, Host: w.tag})
	return err
}

func outcomeOf(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case ctx.Err() != nil:
		return OutcomeCanceled
	default:
		return OutcomeFailed
	}
}

// journal appends an entry; a journal that cannot be written is reported,
// since resume depends on it, but the measurement goes on.
func (o *orch) journal(e JournalEntry) {
	if o.jr == nil {
		return
	}
	if err := o.jr.Append(e); err != nil {
		o.noteLocalWrite(err)
		o.warnAt(e.Host, e.Scenario, err.Error())
	}
}

// noteLocalWrite remembers a local write that failed because the disk is
// full or read-only, so the campaign stops after the current scenario
// instead of running the next ones with nowhere to keep their results.
func (o *orch) noteLocalWrite(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.storageErr == nil && isStorageFull(err) {
		o.storageErr = err
	}
}

// storageFailure is the local write failure that stops the campaign, if any.
func (o *orch) storageFailure() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.storageErr
}

// isStorageFull reports whether err comes from a full or read-only disk.
// Some errors reach here flattened into a scenario's reason, hence the
// message check beside errors.Is.
func isStorageFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "no space left on device") || strings.Contains(msg, "disk quota exceeded") ||
		strings.Contains(msg, "read-only file system")
}

// warn emits a warning of the campaign; a warning about one host or one
// launch names the host (worker.warn, scenarioRun.warn), as every other
// event of a launch does.
func (o *orch) warn(scenario, msg string) { o.warnAt("", scenario, msg) }

func (o *orch) warnAt(host, scenario, msg string) {
	o.emit(Event{Time: o.now(), Kind: EventWarning, Scenario: scenario, Message: msg, Host: host})
}

// warn emits a warning about this host, for scenario when one is concerned.
func (w *worker) warn(scenario, msg string) { w.o.warnAt(w.tag, scenario, msg) }

// warn emits a warning about this launch, naming the host it runs on.
func (s *scenarioRun) warn(msg string) { s.w.warn(s.sc.Name, msg) }

// pidAlive reports whether pid names a live process on this machine.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
