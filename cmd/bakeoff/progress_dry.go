package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/placement"
)

// dryRunDir stands, in what --dry-run prints, for the scratch directory the
// dry run writes its throwaway results into.
const dryRunDir = "(dry run)"

// runDry runs the campaign on hosts that record what they are asked to do
// (placement.Dry) and prints it; its results go to a scratch directory that
// is removed at the end. A budget or deadline that leaves out every round
// fails it: the run would do nothing.
func runDry(ctx context.Context, e *env, c *campaign.Campaign, opt orchestrator.Options) int {
	if err := dryRun(ctx, e.Stdout, c, opt); err != nil {
		fmt.Fprintln(e.Stderr, "bakeoff run --dry-run:", err)
		return exitFailed
	}
	return exitOK
}

// nothingFitsError is a dry run whose budget or deadline leaves out every
// round.
type nothingFitsError struct {
	limit string // "budget of 1h0m0s", "deadline 07:00"
	first string // why the first round was left out
}

func (e *nothingFitsError) Error() string {
	return fmt.Sprintf("no round fits in the campaign's %s, so a run would launch nothing: %s", e.limit, e.first)
}

// dryRun prints the dry run of the campaign to w: a summary, then every
// command the run would send, each launch's once. opt's host, results,
// look and clock are replaced: the dry run's clock moves by the launches'
// expected time (dryClock), so that a budget or deadline leaves out the
// rounds a run whose launches take that long would leave out.
func dryRun(ctx context.Context, w io.Writer, c *campaign.Campaign, opt orchestrator.Options) error {
	scratch, err := os.MkdirTemp("", "bakeoff-dry-")
	if err != nil {
		return fmt.Errorf("creating the dry run's scratch directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	place := &placement.Dry{Campaign: c}
	where := place.Plan()
	n := planNight(c, cmp.Or(opt.ResultsRoot, orchestrator.DefaultResultsRoot), now())
	clock := newDryClock(now(), where.Hosts, expectedLaunch(n))
	rec := newDryRecorder(scratch, clock, lastLaunches(c, opt))
	place.Record = rec.record
	hosts, err := place.Acquire(ctx)
	if err != nil {
		return err
	}
	setHosts(&opt, place, hosts)
	if end, ok := c.End(clock.start); ok {
		opt.Deadline = end
	}
	// A look reads the rounds' measurements, and a dry run has none: it
	// shows every round up to rounds.max.
	opt.Look = nil
	opt.OutDir, opt.ResumeDir, opt.Events, opt.Now = scratch, "", rec.event, clock.now
	_, err = orchestrator.Run(ctx, opt)
	place.Release(ctx)
	if err != nil {
		return err
	}
	l := rec.listing()
	writeDryListing(w, c, where, n, l)
	if len(l.launches) == 0 && len(l.outOfTime) > 0 {
		ev := l.outOfTime[0]
		return &nothingFitsError{limit: budgetName(c), first: fmt.Sprintf("round %d: %s", ev.Round, outOfTimeReason(ev))}
	}
	return nil
}

// expectedLaunch is how long one launch is expected to take: the
// planner's costs before the first round (the night's, which the plan line
// gives), at the campaign's own requests.
func expectedLaunch(n night) time.Duration {
	secs := n.in.At(1, 1).RoundSeconds / float64(max(n.in.Scenarios, 1))
	return time.Duration(secs * float64(time.Second)).Round(time.Second)
}

// lastLaunches is the position (1-based, as events count) of the last
// launch each round runs in the dry run: every scenario of every round,
// or those --only and --round select. The dry host runs the rounds one
// after another (it is not a fleet), in the campaign's order.
func lastLaunches(c *campaign.Campaign, opt orchestrator.Options) map[int]int {
	last := map[int]int{}
	pos := 0
	for k, row := range c.Order() {
		for _, name := range row {
			pos++
			if (opt.Round == 0 || opt.Round == k+1) && (len(opt.Only) == 0 || slices.Contains(opt.Only, name)) {
				last[k+1] = pos
			}
		}
	}
	return last
}

// dryClock is the dry run's clock. It stands still while the orchestrator
// works and moves by the expected time of a launch at each launch's
// start, so that the orchestrator measures each launch as taking that
// long: its estimate for the rounds after the first, which decides
// whether a round fits before a deadline, is then the one a live run
// would make if its launches took as long.
//
// With several hosts (a fleet, an allocation's nodes) each takes the next
// round when it is free: the dry run runs the rounds one after another on
// its one host, and the clock keeps each host's time, so that a round
// starts when the first host is free.
type dryClock struct {
	mu    sync.Mutex
	start time.Time
	t     time.Time
	per   time.Duration
	free  []time.Time // when each host is free
	host  int         // the host of the round in progress
	round int         // the round in progress (0: none yet)
}

func newDryClock(start time.Time, hosts int, per time.Duration) *dryClock {
	k := &dryClock{start: start, t: start, per: per, free: make([]time.Time, max(hosts, 1))}
	for i := range k.free {
		k.free[i] = start
	}
	return k
}

func (k *dryClock) now() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.t
}

// launch moves the clock over a launch of round, which goes to the host
// free first when it is the first launch of that round.
func (k *dryClock) launch(round int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if round != k.round {
		k.round = round
		k.host = 0
		for i, t := range k.free {
			if t.Before(k.free[k.host]) {
				k.host = i
			}
		}
	}
	k.free[k.host] = k.free[k.host].Add(k.per)
	k.t = k.free[k.host]
}

// roundDone sets the clock to when the next round can start: when the
// first host is free.
func (k *dryClock) roundDone() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.t = slices.MinFunc(k.free, func(a, b time.Time) int { return a.Compare(b) })
}

// end is when the last host is done.
func (k *dryClock) end() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.MaxFunc(k.free, func(a, b time.Time) int { return a.Compare(b) })
}

// dryRecorder gathers what the dry host records, by the phase and the
// launch the orchestrator's events say it belongs to.
type dryRecorder struct {
	mu      sync.Mutex
	scratch string
	clock   *dryClock
	last    map[int]int // the last launch of each round (lastLaunches)
	l       dryListing
	launch  *dryLaunch // the launch in progress; nil between launches
	block   *dryBlock  // the block records go to; nil: a new one
	ended   bool       // the campaign has ended: what follows is after it
}

// dryListing is what a dry run recorded, in order.
type dryListing struct {
	before    []*dryBlock // before the first launch: other hosts, lock, prepare, preflight
	launches  []*dryLaunch
	after     []*dryBlock // after the last: the lock's release, other hosts
	outOfTime []orchestrator.Event
	start     time.Time
	end       time.Time // when the last host is expected to be done
	per       time.Duration
}

// dryBlock is a phase's records, or those outside any phase.
type dryBlock struct {
	phase orchestrator.StepName
	// host and on name another host than the one shown (placement.DryRecord).
	host, on string
	recs     []placement.DryRecord
	warnings []string
	failed   string
}

// dryLaunch is one launch: a scenario in a round.
type dryLaunch struct {
	scenario     string
	round, index int // index: 1-based position in the launch sequence
	total        int
	blocks       []*dryBlock
}

func newDryRecorder(scratch string, clock *dryClock, last map[int]int) *dryRecorder {
	return &dryRecorder{scratch: scratch, clock: clock, last: last,
		l: dryListing{start: clock.start, per: clock.per}}
}

// list is where a new block goes now.
func (d *dryRecorder) list() *[]*dryBlock {
	switch {
	case d.launch != nil:
		return &d.launch.blocks
	case d.ended || len(d.l.launches) > 0:
		return &d.l.after
	}
	return &d.l.before
}

func (d *dryRecorder) newBlock(b *dryBlock) {
	l := d.list()
	*l = append(*l, b)
	d.block = b
}

// record files one thing a host was asked to do.
func (d *dryRecorder) record(r placement.DryRecord) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r.Line = strings.ReplaceAll(r.Line, d.scratch, dryRunDir)
	switch {
	case r.On != "":
		d.newBlock(&dryBlock{host: r.Host, on: r.On})
		defer func() { d.block = nil }()
	case d.block == nil || d.block.on != "":
		d.newBlock(&dryBlock{})
	}
	d.block.recs = append(d.block.recs, r)
}

func (d *dryRecorder) event(ev orchestrator.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch ev.Kind {
	case orchestrator.EventScenarioStart:
		d.clock.launch(ev.Round)
		d.launch = &dryLaunch{scenario: ev.Scenario, round: ev.Round, index: ev.Index, total: ev.Total}
		d.l.launches = append(d.l.launches, d.launch)
		d.block = nil
	case orchestrator.EventScenarioEnd:
		d.launch, d.block = nil, nil
		if ev.Index == d.last[ev.Round] {
			d.clock.roundDone()
		}
	case orchestrator.EventPhaseStart:
		d.newBlock(&dryBlock{phase: ev.Phase})
	case orchestrator.EventPhaseEnd:
		if ev.Err != nil && d.block != nil {
			d.block.failed = strings.ReplaceAll(ev.Err.Error(), d.scratch, dryRunDir)
		}
		d.block = nil
	case orchestrator.EventWarning:
		if d.block == nil {
			d.newBlock(&dryBlock{})
		}
		d.block.warnings = append(d.block.warnings, strings.ReplaceAll(ev.Message, d.scratch, dryRunDir))
	case orchestrator.EventRoundOutOfTime:
		d.l.outOfTime = append(d.l.outOfTime, ev)
	case orchestrator.EventCampaignEnd:
		d.ended, d.block = true, nil
	}
}

// listing is what was recorded, once the run is over.
func (d *dryRecorder) listing() dryListing {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.l
	l.end = d.clock.end()
	return l
}
