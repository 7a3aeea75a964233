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
	// Host is the connected host the servers run on. Ignored with DryRun.
	Host remote.Host
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

	// DryRun runs nothing: every command the lifecycle would run on the host
	// is emitted as an EventDryCommand instead.
	DryRun bool
	// KeepServer leaves the last scenario's server running at the end.
	KeepServer bool
	// MaxFailedFraction overrides DefaultMaxFailedFraction.
	MaxFailedFraction float64

	// Events receives progress; nil drops it.
	Events func(Event)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Machine and PID identify this orchestrator in the host lock.
	Machine string
	PID     int
	// PIDAlive reports whether a process on this machine is alive; it
	// decides whether a lock left by an earlier orchestrator is stale.
	PIDAlive func(pid int) bool
}

// Outcome is what a campaign run produced.
type Outcome struct {
	RunDir   string
	Results  []results.ScenarioResult // this invocation's attempts, in launch order
	Skipped  []LaunchKey              // finished earlier in a resumed run
	Failed   int
	Canceled bool // stopped by the context (Ctrl-C); resume to finish
	// Stopped says why the campaign stopped on its own before the end (the
	// local results could no longer be written); resume to finish.
	Stopped string
	Journal []JournalEntry
}

// Run runs the campaign. A scenario that fails is recorded and the campaign
// goes on; the returned error is for what stops the whole campaign (bad
// options, a held lock, an unwritable results directory).
func Run(ctx context.Context, opt Options) (*Outcome, error) {
	o, err := newOrch(opt)
	if err != nil {
		return nil, err
	}
	return o.run(ctx)
}

// orch is one campaign run in progress.
type orch struct {
	opt    Options
	c      *campaign.Campaign
	h      remote.Host
	now    func() time.Time
	emit   func(Event)
	runDir string
	jr     *Journal
	man    results.Manifest
	sum    results.Summary
	// attempts holds the newest journaled attempt per launch (resume).
	attempts map[LaunchKey]int
	finished map[LaunchKey]string
	// launches is the campaign's launch sequence: every round's scenarios in
	// the manifest's order.
	launches []plannedLaunch
	paths    hostPaths
	// hostBakeoff is the bakeoff binary as the host sees it; sweepOnHost says
	// whether the sweep runs there (else through the tunnel).
	hostBakeoff string
	sweepOnHost bool
	outcome     Outcome
	// storageErr is the first local write that failed for lack of space or
	// a read-only disk: every later scenario would be measured for nothing.
	storageErr error
}

func newOrch(opt Options) (*orch, error) {
	if opt.Campaign == nil {
		return nil, errors.New("orchestrator: no campaign")
	}
	if opt.ResumeDir != "" && opt.OutDir != "" {
		return nil, errors.New("--out and --resume are exclusive: a resumed run stays in its directory")
	}
	o := &orch{opt: opt, c: opt.Campaign, h: opt.Host, now: opt.Now, emit: opt.Events}
	if o.now == nil {
		o.now = time.Now
	}
	if o.emit == nil {
		o.emit = func(Event) {}
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
	if opt.DryRun {
		o.h = newDryHost(opt.Host, func(phase, cmd string) {
			o.emit(Event{Time: o.now(), Kind: EventDryCommand, Phase: phase, Message: cmd})
		})
	}
	if o.h == nil {
		return nil, errors.New("orchestrator: no host")
	}
	for _, name := range opt.Only {
		if !slices.ContainsFunc(o.c.Scenarios, func(s *campaign.Scenario) bool { return s.Name == name }) {
			return nil, fmt.Errorf("--only: no scenario %q in campaign %s", name, o.c.Name)
		}
	}
	if opt.Round < 0 || opt.Round > max(o.c.Rounds, 1) {
		return nil, fmt.Errorf("--round %d: campaign %s has rounds 1 to %d", opt.Round, o.c.Name, max(o.c.Rounds, 1))
	}
	o.paths = newHostPaths(o.c.Host.Workdir)
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
	o.emit(Event{Time: o.now(), Kind: EventCampaignStart, RunDir: o.runDir, Total: len(o.launches),
		Rounds: len(o.man.Order), Message: o.h.Name()})

	var lock *hostLock
	err := o.campaignPhase(ctx, "lock", func(ctx context.Context) error {
		var err error
		lock, err = acquireLock(ctx, o.h, o.c.Host.Workdir, LockInfo{Machine: o.opt.Machine, PID: o.opt.PID,
			Started: o.now().UTC(), Campaign: o.c.Name, RunDir: o.runDir}, o.opt.PIDAlive)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTeardownTimeout)
		defer cancel()
		if err := lock.release(tctx); err != nil {
			o.warn("", err.Error())
		}
	}()
	if err := o.campaignPhase(ctx, "prepare", o.prepare); err != nil {
		return nil, err
	}

	var last *scenarioRun
	for _, pl := range o.launches {
		if ctx.Err() != nil {
			o.outcome.Canceled = true
			break
		}
		if !o.selected(pl.key) {
			if o.finished[pl.key] != "" {
				o.outcome.Skipped = append(o.outcome.Skipped, pl.key)
				o.emit(Event{Time: o.now(), Kind: EventScenarioSkip, Scenario: pl.key.Scenario, Round: pl.key.Round,
					Rounds: len(o.man.Order), Index: pl.pos + 1, Total: len(o.launches), Outcome: o.finished[pl.key]})
			}
			continue
		}
		sr := o.newScenarioRun(pl)
		res := o.runScenario(ctx, sr)
		last = sr
		o.outcome.Results = append(o.outcome.Results, res)
		if res.Status == results.StatusFailed {
			o.outcome.Failed++
		}
		if res.Status == results.StatusPending {
			o.outcome.Canceled = true
			break
		}
		if o.storageErr != nil {
			o.outcome.Stopped = fmt.Sprintf("results can no longer be written to %s: %v", o.runDir, o.storageErr)
			o.warn("", "stopping the campaign: "+o.outcome.Stopped)
			break
		}
	}
	if o.opt.KeepServer && last != nil && last.keptServer {
		o.warn("", fmt.Sprintf("server of %s left running on %s (--keep-server); pid file %s",
			last.sc.Name, o.h.Name(), o.paths.serverPID))
	}
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

// plannedLaunch is one entry of the campaign's launch sequence.
type plannedLaunch struct {
	key LaunchKey
	sc  *campaign.Scenario
	pos int // 0-based position in the sequence
}

// planLaunches lays the rounds of the manifest's order end to end.
func (o *orch) planLaunches() {
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

// selected reports whether a launch runs in this invocation: in --round's
// round (when given) and named by --only (when given); without either, when
// not already finished in a resumed run.
func (o *orch) selected(k LaunchKey) bool {
	if o.opt.Round > 0 && k.Round != o.opt.Round {
		return false
	}
	if len(o.opt.Only) > 0 {
		return slices.Contains(o.opt.Only, k.Scenario)
	}
	return o.opt.Round > 0 || o.finished[k] == ""
}

// campaignPhase runs a campaign-level phase with its journal lines.
func (o *orch) campaignPhase(ctx context.Context, name string, fn func(context.Context) error) error {
	start := o.now()
	o.journal(JournalEntry{Time: start, Phase: name, Event: "start"})
	o.emit(Event{Time: start, Kind: EventPhaseStart, Phase: name})
	err := fn(ctx)
	end := o.now()
	outcome := outcomeOf(ctx, err)
	e := JournalEntry{Time: end, Phase: name, Event: "end", Outcome: outcome, DurationS: end.Sub(start).Seconds()}
	if err != nil {
		e.Error = err.Error()
	}
	o.journal(e)
	o.emit(Event{Time: end, Kind: EventPhaseEnd, Phase: name, Outcome: outcome, Duration: end.Sub(start), Err: err})
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
		o.warn(e.Scenario, err.Error())
	}
}

// noteLocalWrite remembers a local write that failed because the disk is
// full or read-only, so the campaign stops after the current scenario
// instead of running the next ones with nowhere to keep their results.
func (o *orch) noteLocalWrite(err error) {
	if o.storageErr == nil && isStorageFull(err) {
		o.storageErr = err
	}
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

func (o *orch) warn(scenario, msg string) {
	o.emit(Event{Time: o.now(), Kind: EventWarning, Scenario: scenario, Message: msg})
}

// pidAlive reports whether pid names a live process on this machine.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
