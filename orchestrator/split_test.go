package orchestrator

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// splitNames is n scenario names, the baseline first.
func splitNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("s%03d", i)
	}
	return out
}

// virtualMakespan runs the scheduler over a layout in virtual time, each
// launch one unit long and every host free from time 0: each host, when
// free, takes what next hands it. It returns the time the last round ends.
func virtualMakespan(t *testing.T, l campaign.Layout, hosts int) int {
	t.Helper()
	var js []*roundJob
	for k, row := range l.Order {
		j := &roundJob{round: k + 1, replicate: k + 1}
		if l.Replicates != nil {
			j.replicate = l.Replicates[k]
		}
		for _, name := range row {
			j.launches = append(j.launches, plannedLaunch{key: LaunchKey{name, k + 1}})
		}
		js = append(js, j)
	}
	s := newScheduler(js)
	free := make([]int, hosts)
	end := 0
	for len(s.left()) > 0 {
		h := 0
		for i := range free {
			if free[i] < free[h] {
				h = i
			}
		}
		j := s.next(fmt.Sprint(h))
		if j == nil {
			t.Fatal("the scheduler handed out nothing with rounds queued")
		}
		free[h] += len(j.launches)
		end = max(end, free[h])
		s.done(j)
	}
	return end
}

// TestSplitMakespan: in virtual time, with every launch equally long, a
// fleet with more hosts than rounds ends within 1.5× of the ideal (the
// campaign's scenarios × rounds launches over the hosts) once the rounds
// are split, where whole rounds take the longest round; with no more hosts
// than rounds the layout and its night are unchanged.
func TestSplitMakespan(t *testing.T) {
	for _, tc := range []struct {
		n, rounds, hosts int
		split            bool
		maxRatio         float64
	}{
		{n: 100, rounds: 3, hosts: 16, split: true, maxRatio: 1.5},
		{n: 30, rounds: 3, hosts: 16, split: true, maxRatio: 1.5},
		{n: 10, rounds: 3, hosts: 8, split: true, maxRatio: 1.7},
		{n: 6, rounds: 6, hosts: 4, maxRatio: 1.5},
		{n: 100, rounds: 3, hosts: 1, maxRatio: 1},
	} {
		t.Run(fmt.Sprintf("%dx%d on %d", tc.n, tc.rounds, tc.hosts), func(t *testing.T) {
			names := splitNames(tc.n)
			ideal := float64(tc.n*tc.rounds) / float64(tc.hosts)
			plain := virtualMakespan(t, campaign.Layout{Order: campaign.LaunchOrder(names, tc.rounds)}, tc.hosts)
			l := campaign.SplitLayout(names, names[0], tc.rounds, tc.hosts)
			if got := l.Replicates != nil; got != tc.split {
				t.Fatalf("split %v, want %v", got, tc.split)
			}
			m := virtualMakespan(t, l, tc.hosts)
			t.Logf("%d×%d on %d hosts: %d rounds; makespan %d launches, ideal %.2f: %.2f× (whole rounds: %d, %.2f×)",
				tc.n, tc.rounds, tc.hosts, len(l.Order), m, ideal, float64(m)/ideal, plain, float64(plain)/ideal)
			if r := float64(m) / ideal; r > tc.maxRatio {
				t.Errorf("makespan %.2f× the ideal, want ≤ %.2f×", r, tc.maxRatio)
			}
			if m > plain {
				t.Errorf("split makespan %d, longer than whole rounds' %d", m, plain)
			}
		})
	}
}

// TestSchedulerWaitsForTheLook: with a look before each replicate past
// rounds.min, no part of a replicate starts while a part of an earlier one
// is queued or running, so the look sees them all; before rounds.min the
// parts of every replicate go at once.
func TestSchedulerWaitsForTheLook(t *testing.T) {
	rep := func(reps ...int) []*roundJob {
		var out []*roundJob
		for k, r := range reps {
			out = append(out, &roundJob{round: k + 1, replicate: r})
		}
		return out
	}
	js := rep(1, 1, 2, 2, 3, 3)
	s := newScheduler(slices.Clone(js)) // the queue's array is the scheduler's
	s.looks = 1
	a, b := s.next("a"), s.next("b")
	if a.replicate != 1 || b.replicate != 1 {
		t.Fatalf("first parts of replicates %d and %d, want 1 and 1", a.replicate, b.replicate)
	}
	s.done(a)
	if s.ready(js[2]) {
		t.Fatal("a part of replicate 2 is ready while one of replicate 1 runs")
	}
	s.done(b)
	c, d := s.next("a"), s.next("b")
	if c.replicate != 2 || d.replicate != 2 {
		t.Fatalf("then replicates %d and %d, want 2 and 2", c.replicate, d.replicate)
	}
	s.done(c)
	if s.ready(js[4]) {
		t.Error("a part of replicate 3 is ready while one of replicate 2 runs")
	}
	s.done(d)
	if !s.ready(js[4]) {
		t.Error("replicate 3 not ready once replicate 2 is done")
	}
	free := newScheduler(rep(1, 2, 3))
	free.looks = 3
	for want := 1; want <= 3; want++ {
		if j := free.next("a"); j == nil || j.replicate != want {
			t.Fatalf("before rounds.min: got %+v, want replicate %d at once", j, want)
		}
	}
}
