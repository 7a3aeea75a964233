package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// sequentialEvents is a sequential campaign of a baseline and three
// variants over rounds {min: 2, max: 4} as the orchestrator reports it,
// with the looks the CLI takes: the look before round 3 stops v1, the one
// before round 4 stops v2. Each round's launches come in its counterbalanced
// order, and the orchestrator's Index and Total are the fixed design's slot
// (of 16), as it sends them. look stands for lookFor: it is called with the
// manifest as the orchestrator left it when the look was taken, before the
// look's event, as the orchestrator does; emit gets each event in turn.
func sequentialEvents(look func(m *results.Manifest, r int, open []string), emit func(orchestrator.Event)) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	all := []string{"base", "v1", "v2", "v3"}
	m := &results.Manifest{Baseline: "base", Scenarios: all, Order: [][]string{
		{"base", "v1", "v2", "v3"}, {"v3", "v2", "v1", "base"}, {"v1", "base", "v3", "v2"}, {"v2", "v3", "base", "v1"}}}
	n := 0
	add := func(e orchestrator.Event) {
		e.Time = t0.Add(time.Duration(n) * time.Second)
		n++
		emit(e)
	}
	add(orchestrator.Event{Kind: orchestrator.EventCampaignStart, Total: 16, Rounds: 4, RunDir: "results/x/1", Message: "local"})
	opens := map[int][]string{3: {"v2", "v3"}, 4: {"v3"}}
	for r := 1; r <= 4; r++ {
		if open, ok := opens[r]; ok {
			look(m, r, open)
			add(orchestrator.Event{Kind: orchestrator.EventLook, Round: r, Rounds: 4,
				Message: fmt.Sprintf("look after %d rounds: open: %s", r-1, strings.Join(open, ", "))})
			// The gate keeps the baseline and the open variants, in the
			// round's order, and records that order.
			m.Order[r-1] = slices.DeleteFunc(m.Order[r-1], func(s string) bool { return s != "base" && !slices.Contains(open, s) })
		}
		for _, name := range m.Order[r-1] {
			slot := (r-1)*4 + slices.Index(all, name) + 1
			sc := func(e orchestrator.Event) {
				e.Scenario, e.Round, e.Rounds, e.Index, e.Total = name, r, 4, slot, 16
				add(e)
			}
			sc(orchestrator.Event{Kind: orchestrator.EventScenarioStart})
			sc(orchestrator.Event{Kind: orchestrator.EventPhaseEnd, Phase: "ready", Outcome: "ok", Duration: time.Second})
			sc(orchestrator.Event{Kind: orchestrator.EventScenarioEnd, Outcome: "ok", Result: &results.ScenarioResult{}})
		}
	}
	add(orchestrator.Event{Kind: orchestrator.EventCampaignEnd})
}

// counterRE finds the launch counters of the progress lines.
var counterRE = regexp.MustCompile(`\[(\d+)/(\d+) `)

// TestLaunchCounter: the counter counts launches as they start and ends at
// its total; the total drops when a look stops variants, and a line says
// so once, beside the look's. The plain lines of the whole campaign are a
// golden file; the live display shows the same counters.
func TestLaunchCounter(t *testing.T) {
	var plain, live bytes.Buffer
	count, liveCount := newLaunchCounter(), newLaunchCounter()
	p := newPlainProgress(&plain, count)
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	l := newLiveProgress(&live, now, 4, liveCount)
	sequentialEvents(count.looked, p.event)
	p.close()
	sequentialEvents(liveCount.looked, l.event)
	l.close()
	out := plain.String()
	golden.Check(t, filepath.Join("testdata", "progress", "sequential.txt"), []byte(out))

	last, lastTotal := 0, 0
	for _, m := range counterRE.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		if n < last || n > total {
			t.Errorf("the counter went from %d to %d (of %d)", last, n, total)
		}
		last, lastTotal = n, total
	}
	if last != 13 || lastTotal != 13 {
		t.Errorf("the counter ends at [%d/%d], want [13/13]: 8 launches in two rounds, then 3 and 2", last, lastTotal)
	}
	for _, want := range []string{
		"launches: 14 planned now, was 16 (v1 launched no more)",
		"launches: 13 planned now, was 14 (v2 launched no more)",
	} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", want, n, out)
		}
	}
	for _, want := range []string{"[13/13 base round 4] ok", "launches: 13 planned now, was 14"} {
		if !strings.Contains(live.String(), want) {
			t.Errorf("the live display lacks %q:\n%s", want, live.String())
		}
	}
}

// TestPlannedLaunches: after a look before replicate r, the rounds before r
// count as they ran and each later round its open variants and the
// baseline; a part of a split round with no open variant is not run.
func TestPlannedLaunches(t *testing.T) {
	whole := &results.Manifest{Baseline: "b", Order: [][]string{
		{"b", "x", "y"}, {"y", "x", "b"}, {"x", "b", "y"}, {"b", "y", "x"}}}
	split := &results.Manifest{Baseline: "b", Replicates: []int{1, 1, 2, 2, 3, 3}, Order: [][]string{
		{"b", "x"}, {"y", "b"}, {"b", "x"}, {"y", "b"}, {"x", "b"}, {"b", "y"}}}
	for _, tc := range []struct {
		name string
		m    *results.Manifest
		r    int
		open []string
		want int
	}{
		{"whole rounds, one variant stops", whole, 3, []string{"y"}, 6 + 2 + 2},
		{"whole rounds, none stops", whole, 3, []string{"x", "y"}, 12},
		{"whole rounds, every variant decided", whole, 3, nil, 6},
		{"split rounds, x stops: its parts are not run", split, 2, []string{"y"}, 4 + 2 + 2},
		{"split rounds, both open", split, 3, []string{"x", "y"}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plannedLaunches(tc.m, tc.r, tc.open); got != tc.want {
				t.Errorf("plannedLaunches = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestLaunchCounterRerun: a launch run again (its round moved to another
// host) keeps its number, so the counter does not pass the total.
func TestLaunchCounterRerun(t *testing.T) {
	c := newLaunchCounter()
	c.number(orchestrator.Event{Kind: orchestrator.EventCampaignStart, Total: 2})
	for _, host := range []string{"gpu-a", "gpu-b"} {
		for _, sc := range []string{"a", "b"} {
			ev := c.number(orchestrator.Event{Kind: orchestrator.EventScenarioStart, Scenario: sc, Round: 1, Index: 9, Total: 2, Host: host})
			if want := map[string]int{"a": 1, "b": 2}[sc]; ev.Index != want || ev.Total != 2 {
				t.Errorf("%s on %s: [%d/%d], want [%d/2]", sc, host, ev.Index, ev.Total, want)
			}
		}
	}
}
