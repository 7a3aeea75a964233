package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// idleHost is a fleet host that is never called: opening a run needs only
// its name.
type idleHost string

var _ remote.Host = idleHost("")

var errIdle = errors.New("idle host: not called in this test")

func (h idleHost) Name() string                                      { return string(h) }
func (idleHost) Run(context.Context, string) ([]byte, []byte, error) { return nil, nil, errIdle }
func (idleHost) Upload(context.Context, string, string) error        { return errIdle }
func (idleHost) Download(context.Context, string, string) error      { return errIdle }
func (idleHost) Open(context.Context, string, int64) (io.ReadCloser, error) {
	return nil, errIdle
}
func (idleHost) Dial(context.Context, string, string) (net.Conn, error) { return nil, errIdle }
func (idleHost) Close() error                                           { return nil }

func idleFleet(n int) []remote.Host {
	var out []remote.Host
	for i := range n {
		out = append(out, idleHost(fmt.Sprintf("gpu-%02d", i)))
	}
	return out
}

// openSplit opens (or resumes) a run of a campaign of n scenarios × rounds
// on hosts hosts and returns its manifest's layout and the launches planned.
func openSplit(t *testing.T, n, rounds, hosts int, out, resume string) (*orch, campaign.Layout) {
	t.Helper()
	c := &campaign.Campaign{Name: "split", Baseline: "s000", Rounds: rounds}
	for _, name := range splitNames(n) {
		c.Scenarios = append(c.Scenarios, &campaign.Scenario{Name: name})
	}
	o, err := newOrch(Options{Campaign: c, Hosts: idleFleet(hosts), OutDir: out, ResumeDir: resume})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.openRun(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.jr.Close() })
	return o, campaign.Layout{Order: o.man.Order, Replicates: o.man.Replicates}
}

// TestRunLayout: a fleet with more hosts than rounds records the split
// layout in the manifest and plans its launches; --resume keeps the layout
// recorded, on another number of hosts too, and a run laid out whole stays
// whole when resumed on more hosts.
func TestRunLayout(t *testing.T) {
	dir := t.TempDir()
	split := dir + "/split"
	o, l := openSplit(t, 10, 3, 8, split, "")
	want := campaign.SplitLayout(splitNames(10), "s000", 3, 8)
	if !slices.EqualFunc(l.Order, want.Order, slices.Equal) || !slices.Equal(l.Replicates, want.Replicates) || want.Replicates == nil {
		t.Fatalf("manifest layout %+v, want the split %+v", l, want)
	}
	if len(o.launches) != want.Launches() {
		t.Errorf("%d launches planned, want %d", len(o.launches), want.Launches())
	}
	if jobs := o.planRounds(); len(jobs) != len(want.Order) || jobs[len(jobs)-1].replicate != 3 {
		t.Errorf("%d rounds to place, the last of replicate %d; want %d, of replicate 3", len(jobs), jobs[len(jobs)-1].replicate, len(want.Order))
	}
	if o.replicates() != 3 {
		t.Errorf("replicates %d, want 3", o.replicates())
	}
	o2, l2 := openSplit(t, 10, 3, 2, "", split)
	if !slices.EqualFunc(l2.Order, want.Order, slices.Equal) || !slices.Equal(l2.Replicates, want.Replicates) || len(o2.launches) != want.Launches() {
		t.Errorf("resumed on 2 hosts: layout %+v, want the recorded %+v", l2, want)
	}

	whole := dir + "/whole"
	_, w := openSplit(t, 10, 3, 2, whole, "")
	if w.Replicates != nil || len(w.Order) != 3 {
		t.Fatalf("2 hosts, 3 rounds: %+v, want whole rounds", w)
	}
	_, w2 := openSplit(t, 10, 3, 8, "", whole)
	if w2.Replicates != nil || !slices.EqualFunc(w2.Order, w.Order, slices.Equal) {
		t.Errorf("a whole-round run resumed on 8 hosts: %+v, want it whole", w2)
	}
}

// TestGateSplit: in a sequential campaign split over a fleet, the look
// before a replicate is taken once, by its first part, and gates every part
// of it: each keeps the baseline and its own variants still open, in the
// counterbalanced order of those, and a part with none open is not run.
func TestGateSplit(t *testing.T) {
	o, l := openSplit(t, 5, 4, 12, t.TempDir()+"/run", "")
	o.c.MinRounds = 2
	if !o.c.Sequential() || l.Parts(3) != 2 {
		t.Fatalf("layout %+v: want a sequential campaign, two parts per round", l)
	}
	looks := 0
	o.opt.Look = func(_ context.Context, _ string, rounds int) (Look, error) {
		looks++
		if rounds != 2 {
			t.Errorf("look after %d rounds, want 2 (replicates, not parts)", rounds)
		}
		return Look{Open: []string{"s001", "s002"}, Stopped: []string{"s003: decided", "s004: decided"}}, nil
	}
	jobs := o.planRounds()
	var third []*roundJob
	for _, j := range jobs {
		if j.replicate == 3 {
			third = append(third, j)
		}
	}
	if len(third) != 2 {
		t.Fatalf("replicate 3 has %d parts, want 2", len(third))
	}
	// Variants are dealt round-robin: s001 and s003 in the first part, s002
	// and s004 in the second. The decided ones leave the part's own design,
	// the others keep their places in it (campaign.OrderStill).
	for i, want := range [][]string{
		campaign.OrderStill([]string{"s000", "s001", "s003"}, []string{"s000", "s001"}, 3),
		campaign.OrderStill([]string{"s000", "s002", "s004"}, []string{"s000", "s002"}, 3),
	} {
		j := third[i]
		if !o.gate(context.Background(), j) {
			t.Fatalf("part %d of replicate 3 not run", i+1)
		}
		var got []string
		for _, pl := range j.launches {
			got = append(got, pl.key.Scenario)
		}
		if !slices.Equal(got, want) || !slices.Equal(o.man.Order[j.round-1], want) {
			t.Errorf("part %d runs %v (manifest %v), want %v", i+1, got, o.man.Order[j.round-1], want)
		}
	}
	if looks != 1 {
		t.Errorf("%d looks before replicate 3, want one for both parts", looks)
	}
	o.opt.Look = func(context.Context, string, int) (Look, error) {
		return Look{Open: []string{"s002"}}, nil
	}
	for _, j := range jobs {
		if j.replicate == 4 && slices.ContainsFunc(j.launches, func(pl plannedLaunch) bool { return pl.key.Scenario == "s001" }) {
			if o.gate(context.Background(), j) {
				t.Error("a part whose variants are all decided runs")
			}
		}
	}
}

// TestSplitRoundOption: on a run whose rounds were split, --round names the
// campaign's round and runs every part of it, and nothing of the others;
// events name a part's launch by its round too, and the out-of-time line
// by both.
func TestSplitRoundOption(t *testing.T) {
	c := &campaign.Campaign{Name: "split", Baseline: "s000", Rounds: 3}
	for _, name := range splitNames(10) {
		c.Scenarios = append(c.Scenarios, &campaign.Scenario{Name: name})
	}
	var got []Event
	o, err := newOrch(Options{Campaign: c, Hosts: idleFleet(8), OutDir: t.TempDir(), Round: 2,
		Events: func(e Event) { got = append(got, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.openRun(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.jr.Close() })
	if !o.man.Split() {
		t.Fatal("the layout is not split")
	}
	runs := map[int]bool{}
	for _, pl := range o.launches {
		rep := o.man.Replicate(pl.key.Round)
		if need := o.needsRun(pl.key, ""); need != (rep == 2) {
			t.Errorf("%s in results round %d (round %d): runs %v", pl.key.Scenario, pl.key.Round, rep, need)
		}
		if rep == 2 {
			runs[pl.key.Round] = true
		}
	}
	if len(runs) < 2 {
		t.Errorf("--round 2 runs results rounds %v, want every part of round 2", runs)
	}
	var part int
	for k := range runs {
		part = max(part, k)
	}
	o.emit(Event{Kind: EventScenarioEnd, Scenario: "s001", Round: part})
	if len(got) != 1 || got[0].Replicate != 2 || got[0].Rounds != 3 || got[0].Round != part {
		t.Errorf("event %+v, want round %d as replicate 2 of 3", got, part)
	}
	if want := fmt.Sprintf("round 2 (results round %d)", part); o.roundName(part) != want {
		t.Errorf("roundName(%d) = %q, want %q", part, o.roundName(part), want)
	}
}
