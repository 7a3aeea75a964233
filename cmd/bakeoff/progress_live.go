package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
)

// liveRefresh is how often the live display redraws.
const liveRefresh = 200 * time.Millisecond

// liveProgress is the terminal display: a campaign bar (scenario i/N, elapsed,
// an ETA from the scenarios done so far) and, per scenario, a bar of the
// sweep's requests with its phase, elapsed time, the newest server log line
// while loading and the level in progress with live tok/s. Finished
// scenarios and warnings are printed above the bars as lines.
type liveProgress struct {
	p   *mpb.Progress
	now func() time.Time

	// mu serializes events. textMu guards the fields the decorators read:
	// mpb calls decorators from its render goroutine while a bar method
	// called here waits for that goroutine, so the decorators must never
	// need mu.
	mu         sync.Mutex
	textMu     sync.Mutex
	campaign   *mpb.Bar
	sweepTotal int // requests per scenario's sweep, warm-up included
	// slots are the launches in progress, one per host (a single host's
	// is under "").
	slots    map[string]*liveSlot
	started  time.Time // campaign
	finished int
	total    int
	count    *launchCounter
	done     map[launchKey]bool // the launches finished
}

// liveSlot is the bar of the launch in progress on one host.
type liveSlot struct {
	bar       *mpb.Bar
	done      int // requests of finished levels in the current sweep
	warm      int // warm-up requests finished in the current sweep
	name      string
	phase     string
	status    string
	scStarted time.Time
}

func newLiveProgress(w io.Writer, now func() time.Time, sweepTotal int, count *launchCounter) *liveProgress {
	return &liveProgress{
		p:          mpb.New(mpb.WithOutput(w), mpb.WithWidth(30), mpb.WithRefreshRate(liveRefresh), mpb.WithAutoRefresh()),
		now:        now,
		sweepTotal: max(1, sweepTotal),
		started:    now(),
		slots:      map[string]*liveSlot{},
		count:      count,
		done:       map[launchKey]bool{},
	}
}

func (l *liveProgress) println(s string) {
	fmt.Fprintln(l.p, l.now().UTC().Format("15:04:05")+" "+s)
}

func (l *liveProgress) text(fn func() string) decor.Decorator {
	return decor.Any(func(decor.Statistics) string {
		l.textMu.Lock()
		defer l.textMu.Unlock()
		return fn()
	})
}

func (l *liveProgress) event(ev orchestrator.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev = l.count.number(ev)
	switch ev.Kind {
	case orchestrator.EventCampaignStart:
		l.setText(func() { l.total = ev.Total })
		l.campaign = l.p.AddBar(int64(max(1, ev.Total)),
			mpb.PrependDecorators(decor.Name("campaign ", decor.WCSyncSpaceR),
				l.text(func() string { return fmt.Sprintf("%d/%d", l.finished, l.total) })),
			mpb.AppendDecorators(l.text(l.campaignTimes)))
		l.println(eventLine(ev))
	case orchestrator.EventScenarioStart:
		sl := &liveSlot{name: ev.Scenario, scStarted: ev.Time}
		if old := l.slots[ev.Host]; old != nil && old.bar != nil {
			old.bar.Abort(true)
		}
		l.setText(func() { l.slots[ev.Host] = sl })
		label := fmt.Sprintf("[%d/%d] %s%s%s ", ev.Index, ev.Total, ev.Scenario, roundSuffix(ev), hostSuffix(ev))
		sl.bar = l.p.AddBar(int64(l.sweepTotal),
			mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(decor.Name(label, decor.WCSyncSpaceR),
				l.text(func() string { return fmt.Sprintf("%-14s %s", sl.phase, fmtSeconds(l.now().Sub(sl.scStarted))) })),
			mpb.AppendDecorators(l.text(func() string { return truncate(sl.status, 70) })))
	case orchestrator.EventScenarioSkip:
		l.finish(ev)
		l.println(eventLine(ev))
	case orchestrator.EventPhaseStart:
		if sl := l.slots[ev.Host]; sl != nil {
			l.setText(func() { sl.phase, sl.status = string(ev.Phase), "" })
		}
	case orchestrator.EventPhaseEnd:
		if ev.Outcome != orchestrator.OutcomeOK || ev.Scenario == "" {
			l.println(eventLine(ev))
		}
	case orchestrator.EventServerLog, orchestrator.EventWaiting:
		if sl := l.slots[ev.Host]; sl != nil {
			l.setText(func() { sl.status = ev.Message })
		}
	case orchestrator.EventSweep:
		if sl := l.slots[ev.Host]; sl != nil {
			l.sweep(sl, ev.Sweep)
		}
	case orchestrator.EventScenarioEnd:
		if sl := l.slots[ev.Host]; sl != nil && sl.bar != nil {
			sl.bar.SetTotal(-1, true)
			sl.bar = nil
		}
		l.finish(ev)
		l.println(eventLine(ev))
	case orchestrator.EventWarning, orchestrator.EventHostLost, orchestrator.EventRoundOutOfTime:
		l.println(eventLine(ev))
	case orchestrator.EventLook:
		for _, line := range lookLines(ev.Message) {
			l.println(line)
		}
		if note := l.count.takeNote(); note != "" {
			l.println(note)
			total := l.count.planned()
			l.setText(func() { l.total = total })
			if l.campaign != nil {
				l.campaign.SetTotal(int64(max(1, total)), false)
			}
		}
	case orchestrator.EventCampaignEnd:
		if l.campaign != nil {
			l.campaign.SetTotal(-1, true)
		}
	}
}

// finish counts the launch of ev as finished, once: a launch run again
// (its round moved to another host) is one launch of the plan.
func (l *liveProgress) finish(ev orchestrator.Event) {
	l.done[launchKey{ev.Scenario, ev.Round}] = true
	n := len(l.done)
	l.setText(func() { l.finished = n })
	if l.campaign != nil {
		l.campaign.SetCurrent(int64(n))
	}
}

// setText changes what the decorators show.
func (l *liveProgress) setText(fn func()) {
	l.textMu.Lock()
	defer l.textMu.Unlock()
	fn()
}

func (l *liveProgress) sweep(sl *liveSlot, ev *loadgen.Event) {
	if ev == nil || sl.bar == nil {
		return
	}
	switch ev.Kind {
	case loadgen.EventWarmup, loadgen.EventLevelStart, loadgen.EventProgress:
		status := fmt.Sprintf("%s %d/%d  %.1f tok/s", measure.LevelName(ev.Level), ev.Done, ev.Total, ev.TokPerSec)
		if ev.Kind == loadgen.EventWarmup {
			sl.warm = ev.Done
			status = fmt.Sprintf("warm-up %d/%d", ev.Done, ev.Total)
		}
		l.setText(func() { sl.status = status })
		cur := sl.warm + sl.done
		if ev.Kind != loadgen.EventWarmup {
			cur += ev.Done
		}
		sl.bar.SetCurrent(int64(min(l.sweepTotal-1, cur)))
	case loadgen.EventLevelEnd:
		sl.done += ev.Total
		if ev.Summary != nil {
			line := fmt.Sprintf("[%s] %s", sl.name, measure.FormatLevel(*ev.Summary))
			l.println(line)
		}
	}
}

// campaignTimes is the elapsed time and, once a scenario has finished, an
// ETA from the mean time per finished scenario.
func (l *liveProgress) campaignTimes() string {
	el := l.now().Sub(l.started)
	s := "elapsed " + fmtSeconds(el)
	if l.finished > 0 && l.finished < l.total {
		per := el / time.Duration(l.finished)
		s += ", ETA " + fmtSeconds(per*time.Duration(l.total-l.finished))
	}
	return s
}

func (l *liveProgress) close() {
	l.mu.Lock()
	for _, sl := range l.slots {
		if sl.bar != nil {
			sl.bar.Abort(true)
		}
	}
	if l.campaign != nil && !l.campaign.Completed() {
		l.campaign.Abort(false)
	}
	l.mu.Unlock()
	l.p.Wait()
}
