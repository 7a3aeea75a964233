package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/bakeoff-dev/bakeoff/results"
)

// planRounds lays the campaign out as rounds to place. In a resumed fleet
// run a round goes back to the host it last ran on (its home) when that
// host is in the fleet; a launch counts as finished only if it finished
// there. A round whose home is not in the fleet (or is lost) and that has
// launches to run is run whole elsewhere, so its counted launches share a
// host.
func (o *orch) planRounds() []*roundJob {
	var jobs []*roundJob
	for k := 1; k <= len(o.man.Order); k++ {
		j := &roundJob{round: k, replicate: o.man.Replicate(k), run: map[LaunchKey]bool{}}
		home := o.homes[k]
		usable := home != "" && slices.ContainsFunc(o.workers, func(w *worker) bool { return w.id() == home && w.lost == "" })
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
// round (when given; with split rounds, every part of that replicate) and
// named by --only (when given); without either, when not already finished
// in a resumed run (on home, when the round has one).
func (o *orch) needsRun(k LaunchKey, home string) bool {
	if o.opt.Round > 0 && o.man.Replicate(k.Round) != o.opt.Round {
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
	if o.c.Sequential() && o.opt.Look != nil {
		sched.looks = o.c.MinRounds
	}
	for _, w := range o.workers {
		if w.lost != "" {
			sched.lose(w.id(), nil)
		}
	}
	stop := context.AfterFunc(ctx, sched.stop)
	defer stop()
	var wg sync.WaitGroup
	for _, w := range o.workers {
		if w.lost != "" || !w.leads() {
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
	// A round moved off a lost host may have measured launches before the
	// host went, and they are kept: such a round is unfinished, not unrun.
	var cut, unrun []string
	for _, j := range left {
		if len(j.from) > 0 {
			cut = append(cut, fmt.Sprint(j.round))
		} else {
			unrun = append(unrun, fmt.Sprint(j.round))
		}
	}
	var parts []string
	if len(cut) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s not finished (what its launches measured before the loss is kept)", plural("round", len(cut)), strings.Join(cut, ", ")))
	}
	if len(unrun) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s not run", plural("round", len(unrun)), strings.Join(unrun, ", ")))
	}
	o.outcome.Stopped = "every host of the fleet was lost; " + strings.Join(parts, "; ")
}

// plural is word, with an s unless n is 1.
func plural(word string, n int) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// work is one host's loop: take a round, run it, until none is left for it.
func (o *orch) work(ctx context.Context, w *worker, sched *scheduler) {
	for {
		j := sched.next(w.id())
		if j == nil {
			return
		}
		if ctx.Err() != nil {
			o.setCanceled()
			sched.done(j)
			sched.stop()
			return
		}
		if !o.fits(j) || !o.gate(ctx, j) {
			sched.done(j)
			continue
		}
		if o.toRun(j) > 0 {
			o.place(j, w)
		}
		lost, stop := o.runRound(ctx, w, j)
		if lost != "" {
			w.lose(j.round, lost)
			sched.lose(w.id(), j)
			w.releaseGroup(ctx)
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
		sr.scale = j.scale
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
	o.outcome.Placements = append(o.outcome.Placements, RoundPlacement{Round: j.round, Host: w.id(), From: slices.Clone(j.from)})
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
