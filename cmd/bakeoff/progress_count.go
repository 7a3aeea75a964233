package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// launchCounter is the counter the progress lines show, "[24/27 a round 7]":
// the launches started so far, this one included, and the launches the
// campaign now plans in all. The orchestrator's Index and Total are a
// launch's slot in the fixed design's sequence instead; shown as progress,
// a sequential campaign's looks (which leave the stopped variants out), a
// resumed run's skips and a fleet's hosts running rounds side by side made
// the counter run backwards ([23/32], [24/32], [22/32]) and end short of
// its total ([30/32] after 27 launches).
//
// The total starts as the campaign's (every scenario in every round) and
// changes at a look that stops variants; the note that says so is shown
// once, beside the look's line.
type launchCounter struct {
	mu      sync.Mutex
	started int
	total   int
	// numbers are the launches' numbers by scenario and results round: a
	// launch run again (its round moved to another host, or resumed) keeps
	// its number, so the count never passes the total.
	numbers map[launchKey]int
	// open are the variants the last look left open; nil before the first.
	open []string
	// note is the change of the total not yet shown.
	note string
}

type launchKey struct {
	scenario string
	round    int
}

func newLaunchCounter() *launchCounter {
	return &launchCounter{numbers: map[launchKey]int{}}
}

// number rewrites ev's Index and Total as the counter's: a launch's number
// among those started and the planned total. Events about no launch are
// left as they are, but for the campaign's start, which gives the total.
func (c *launchCounter) number(ev orchestrator.Event) orchestrator.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Kind == orchestrator.EventCampaignStart {
		c.total = ev.Total
		return ev
	}
	if ev.Scenario == "" || ev.Total == 0 {
		return ev
	}
	k := launchKey{ev.Scenario, ev.Round}
	n, ok := c.numbers[k]
	if !ok {
		c.started++
		n = c.started
		c.numbers[k] = n
	}
	ev.Index, ev.Total = n, max(c.total, c.started)
	return ev
}

// takeNote is the line that says the total changed, once; "" when it has
// not changed since the last call.
func (c *launchCounter) takeNote() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.note
	c.note = ""
	return n
}

// planned is the launches planned now.
func (c *launchCounter) planned() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// looked takes in a look of a sequential campaign before replicate r,
// which open variants run on: the rounds from r on launch only those and
// the baseline, in the parts that still hold one (plannedLaunches), and
// the total follows.
func (c *launchCounter) looked(m *results.Manifest, r int, open []string) {
	total := plannedLaunches(m, r, open)
	c.mu.Lock()
	defer c.mu.Unlock()
	before := c.open
	if before == nil {
		before = slices.DeleteFunc(slices.Clone(m.Scenarios), func(s string) bool { return s == m.Baseline })
	}
	c.open = slices.Clone(open)
	if c.open == nil {
		c.open = []string{}
	}
	if total == c.total || c.total == 0 {
		c.total = max(c.total, total)
		return
	}
	var stopped []string
	for _, s := range before {
		if !slices.Contains(open, s) {
			stopped = append(stopped, s)
		}
	}
	why := "every variant decided: the rounds left are not run"
	if len(open) > 0 {
		why = joinNames(stopped) + " launched no more"
	}
	c.note = fmt.Sprintf("launches: %d planned now, was %d (%s)", total, c.total, why)
	c.total = total
}

// plannedLaunches is the launches of the run in m once the look before
// replicate r has left only the variants open (and the baseline) in the
// rounds from r on: the rounds before r as they ran (each round's order
// is rewritten when it starts), and in each later round the open variants
// it holds, with the baseline when it holds any (a part of a split round
// whose variants all stopped is not run).
func plannedLaunches(m *results.Manifest, r int, open []string) int {
	n := 0
	for k, row := range m.Order {
		if m.Replicate(k+1) < r {
			n += len(row)
			continue
		}
		kept := 0
		for _, s := range row {
			if s != m.Baseline && slices.Contains(open, s) {
				kept++
			}
		}
		if kept > 0 && slices.Contains(row, m.Baseline) {
			kept++
		}
		n += kept
	}
	return n
}

// joinNames is "a", "a and b" or "a, b and c".
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "no variant"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
