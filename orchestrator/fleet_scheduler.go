package orchestrator

import (
	"slices"
	"sync"
)

// roundJob is one round to place on a host: its launches in order, those
// this invocation runs, and where it must or may go.
type roundJob struct {
	round int
	// replicate is the replicate the round belongs to: the round itself,
	// or in a layout split over a fleet the replicate it is a part of.
	replicate int
	launches  []plannedLaunch
	run       map[LaunchKey]bool
	// home is the host the round must run on ("" for any): the one its
	// counted launches ran on, in a resumed fleet run.
	home string
	// whole says every launch of the round that counts runs again, so that
	// all of them share the host it now runs on (it moved, or its home is
	// not in this fleet).
	whole bool
	from  []string // hosts it was moved away from
	// scale, when above 1, multiplies the `auto` request count of its
	// sweeps' levels (a sequential campaign's planner).
	scale int
}

// scheduler hands rounds to hosts: a host that is free takes the first
// round homed to it, else the first round homed nowhere. A lost host's
// round goes back to the front of the queue, to be run whole elsewhere.
//
// With looks set (a sequential campaign's rounds.min), a round of a
// replicate past it waits until every round of the earlier replicates is
// done: the look before a replicate must see them all, whichever hosts ran
// them, and it gates every part of that replicate alike.
type scheduler struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*roundJob
	running []*roundJob
	lost    map[string]bool
	stopped bool
	looks   int
}

func newScheduler(jobs []*roundJob) *scheduler {
	s := &scheduler{queue: jobs, lost: map[string]bool{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// ready reports whether j may start: always, unless a look comes before
// its replicate and a round of an earlier replicate is queued or running.
func (s *scheduler) ready(j *roundJob) bool {
	if s.looks <= 0 || j.replicate <= s.looks {
		return true
	}
	earlier := func(q *roundJob) bool { return q.replicate < j.replicate }
	return !slices.ContainsFunc(s.queue, earlier) && !slices.ContainsFunc(s.running, earlier)
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
		i := slices.IndexFunc(s.queue, func(j *roundJob) bool { return j.home == host && s.ready(j) })
		if i < 0 {
			i = slices.IndexFunc(s.queue, func(j *roundJob) bool { return j.home == "" && s.ready(j) })
		}
		if i >= 0 {
			j := s.queue[i]
			s.queue = slices.Delete(s.queue, i, i+1)
			s.running = append(s.running, j)
			return j
		}
		if len(s.queue) == 0 && len(s.running) == 0 {
			return nil
		}
		s.cond.Wait()
	}
}

// done ends a round taken with next.
func (s *scheduler) done(j *roundJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finish(j)
	s.cond.Broadcast()
}

// finish takes j off the running rounds.
func (s *scheduler) finish(j *roundJob) {
	if i := slices.Index(s.running, j); i >= 0 {
		s.running = slices.Delete(s.running, i, i+1)
	}
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
		s.finish(j)
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
