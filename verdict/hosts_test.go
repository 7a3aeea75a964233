package verdict

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// fleet is two hosts, the second 3% faster than the first; equalFleet the
// same two hosts equally fast.
var (
	fleet      = []verdicttest.FleetHost{{Name: "gpu-a", StepFactor: 1}, {Name: "gpu-b", StepFactor: 1 / 1.03}}
	equalFleet = []verdicttest.FleetHost{{Name: "gpu-a", StepFactor: 1}, {Name: "gpu-b", StepFactor: 1}}
)

// byRound runs each round whole on one host, unevenly: rounds 3 and 6 on
// gpu-a, the other four on gpu-b.
func byRound(r, _ int) int {
	if r%3 == 0 {
		return 0
	}
	return 1
}

// byScenario runs each scenario on its own host: what a fleet that placed
// launches rather than rounds could do.
func byScenario(_, i int) int { return i }

// simulateFleet runs one campaign of the baseline and a variant over fleet;
// with hostsKnown false the results do not say which host ran what, as in
// results written before hosts were recorded.
func simulateFleet(t *testing.T, hosts []verdicttest.FleetHost, variant verdicttest.Engine, place func(r, i int) int, seed uint64, hostsKnown bool) *Verdict {
	t.Helper()
	s := honestySweep()
	ls := verdicttest.FleetCampaign([]verdicttest.Engine{realBaseline, variant}, s, DefaultRounds, hosts, place, seed)
	if !hostsKnown {
		for i := range ls {
			ls[i].Host = ""
		}
	}
	v, err := Judged(verdicttest.CampaignInput([]string{"baseline", "variant"}, s, DefaultRounds, ls), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fleetSeed is the first seed of the fleet campaigns. With seeds from 1,
// as the single-host tests use, the fleet A/A campaigns name a false win or
// loss in 3 of 40 crossover sentences, on equal hosts as on hosts 3% or 10%
// apart: the draws, not the hosts (over 100 campaigns from this seed, 1 of
// 100 for all three fleets). docs/METHOD.md says so.
const fleetSeed = 1001

// TestHonestyFleetAA: the baseline against itself over a fleet whose hosts
// differ by 3%, rounds spread unevenly over them. Pairing within a round
// blocks on the host: the outcomes are those of the same campaigns on two
// equal hosts, and a winner is named at no more of the levels, and in no
// more crossover sentences, than the single-host A/A bounds allow. The
// notes report the hosts' speeds, and the faster host comes out faster.
func TestHonestyFleetAA(t *testing.T) {
	syntheticCampaigns(t)
	var tl tally
	var gap float64
	same, compared := 0, 0
	for k := range uint64(honestyCampaigns) {
		seed := fleetSeed + k
		v := simulateFleet(t, fleet, realBaseline, byRound, seed, true)
		tl.add(v, nil)
		if k < honestyCampaigns/4 {
			e := simulateFleet(t, equalFleet, realBaseline, byRound, seed, true)
			for _, c := range v.Levels {
				compared++
				if v.Cell(c, "variant").Outcome == e.Cell(c, "variant").Outcome {
					same++
				}
			}
		}
		if len(v.Hosts) != 2 || len(v.Hosts[0].Rounds) != 2 || len(v.Hosts[1].Rounds) != 4 {
			t.Fatalf("hosts %+v, want gpu-a with 2 rounds and gpu-b with 4", v.Hosts)
		}
		gap += (v.Hosts[1].RelativePct - v.Hosts[0].RelativePct) / honestyCampaigns
		if !hasNote(v, CheckHosts, "gpu-b") {
			t.Errorf("seed %d: no note on the hosts' speeds", seed)
		}
		if len(v.MixedHosts) > 0 {
			t.Errorf("seed %d: rounds on mixed hosts %+v, but every round ran on one host", seed, v.MixedHosts)
		}
	}
	t.Logf("fleet A/A, %d rounds, hosts 3%% apart: %s; gpu-b measured %.1f%% faster than gpu-a on average; the same outcome as on equal hosts at %d of %d levels",
		DefaultRounds, tl, gap, same, compared)
	if same*100 < compared*99 {
		t.Errorf("the hosts' 3%% changed the outcome at %d of %d levels", compared-same, compared)
	}
	if tl.rate(tl.winners) > 0.05 {
		t.Errorf("a winner at %.1f%% of levels, want ≤ 5%%", 100*tl.rate(tl.winners))
	}
	if tl.sentences*20 > tl.campaigns {
		t.Errorf("a false win or loss in %d of %d crossover sentences, want ≤ 5%%", tl.sentences, tl.campaigns)
	}
	if gap < 2 || gap > 4 {
		t.Errorf("the faster host measured %.1f%% faster, want about 3%%", gap)
	}
}

// TestHonestyFleetUnblocked: each scenario on its own host, the hosts 3%
// apart. Paired by round without regard to host (results that do not name
// the hosts), the A/A campaign calls the hosts' difference a winner at most
// levels; with the hosts named, no round is comparable, no winner is named,
// and the notes say why.
func TestHonestyFleetUnblocked(t *testing.T) {
	syntheticCampaigns(t)
	var naive, blocked tally
	for seed := range uint64(honestyCampaigns / 4) {
		naive.add(simulateFleet(t, fleet, realBaseline, byScenario, fleetSeed+seed, false), nil)
		v := simulateFleet(t, fleet, realBaseline, byScenario, fleetSeed+seed, true)
		blocked.add(v, nil)
		if !hasNote(v, CheckHosts, "no round is left to compare them") {
			t.Errorf("seed %d: no note on the rounds left out: %v", seed, v.Notes)
		}
	}
	t.Logf("A/A, each scenario on its own host, paired without regard to host: %s", naive)
	t.Logf("the same, hosts named: %s", blocked)
	if naive.rate(naive.winners) <= 0.5 {
		t.Errorf("pairing across hosts named a winner at only %.1f%% of levels: the test has no teeth", 100*naive.rate(naive.winners))
	}
	if blocked.winners > 0 {
		t.Errorf("a winner at %d levels across hosts", blocked.winners)
	}
}

// TestHonestyFleetPower: a variant truly 5% slower is found slower over the
// uneven fleet as on one host: at 80% or more of levels at DefaultRounds.
func TestHonestyFleetPower(t *testing.T) {
	syntheticCampaigns(t)
	slow := realBaseline
	slow.Slowdown = 1.05
	var tl tally
	for seed := range uint64(20) {
		tl.add(simulateFleet(t, fleet, slow, byRound, fleetSeed+100+seed, true), nil)
	}
	t.Logf("fleet power, 5%% slower, %d rounds: %s", DefaultRounds, tl)
	if r := tl.rate(tl.slower); r < 0.80 {
		t.Errorf("found slower at %.1f%% of levels, want ≥ 80%%", 100*r)
	}
	if tl.faster > 0 {
		t.Errorf("the slower variant was called faster at %d levels", tl.faster)
	}
}

// TestHostsMixedRound: one round whose launches ran on different hosts is
// left out of the comparison, the others are kept, and the note names it.
func TestHostsMixedRound(t *testing.T) {
	s := honestySweep()
	s.Concurrency = []int{1, 10}
	place := func(r, i int) int {
		if r == 2 {
			return 1 - i // round 2: baseline on gpu-b, variant on gpu-a
		}
		return 0
	}
	ls := verdicttest.FleetCampaign([]verdicttest.Engine{realBaseline, realBaseline}, s, 4, fleet, place, 1)
	v, err := Judged(verdicttest.CampaignInput([]string{"baseline", "variant"}, s, 4, ls), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.MixedHosts) != 1 || len(v.MixedHosts[0].Rounds) != 1 || v.MixedHosts[0].Rounds[0] != 2 || v.MixedHosts[0].Left != 3 {
		t.Fatalf("mixed hosts %+v, want round 2 left out and 3 rounds left", v.MixedHosts)
	}
	for _, c := range s.Concurrency {
		if cell := v.Cell(measure.ConcurrencyLevel(c), "variant"); !cell.Compared || cell.Rounds != 3 {
			t.Errorf("C=%d: compared %v on %d rounds, want 3", c, cell.Compared, cell.Rounds)
		}
	}
	if !hasNote(v, CheckHosts, "variant and baseline ran on different hosts in round 2") {
		t.Errorf("notes %v", v.Notes)
	}
	// Both hosts ran some of the baseline's launches: the speeds are reported.
	if len(v.Hosts) != 2 || math.IsNaN(v.Hosts[0].RelativePct) {
		t.Errorf("hosts %+v", v.Hosts)
	}
}

func hasNote(v *Verdict, check, text string) bool {
	for _, n := range v.Notes {
		if n.Check == check && strings.Contains(n.Text, text) {
			return true
		}
	}
	return false
}

// TestHostsThroughRunDir: a fleet's run directory, each launch's host in its
// summary entry, read back by records.Read: the hosts and their rounds are
// reported, the faster host as faster, and every launch names its host.
func TestHostsThroughRunDir(t *testing.T) {
	s := honestySweep()
	s.Concurrency = []int{1, 10}
	const rounds = 4
	ls := verdicttest.FleetCampaign([]verdicttest.Engine{realBaseline, realBaseline}, s, rounds, fleet, byRound, 3)
	scs := []verdicttest.Scenario{{Name: "baseline"}, {Name: "variant"}}
	for _, l := range ls {
		sc := &scs[l.Scenario]
		sc.Rounds = append(sc.Rounds, l.Records)
		sc.Hosts = append(sc.Hosts, l.Host)
	}
	m := verdicttest.Manifest("fleet", "run", "sha256:fleet", "baseline", s, "baseline", "variant")
	m.Rounds = rounds
	run, err := verdicttest.WriteRun(t.TempDir(), m, scs)
	if err != nil {
		t.Fatal(err)
	}
	v, err := judgedDir(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Hosts) != 2 || v.Hosts[0].Host != "gpu-a" || fmt.Sprint(v.Hosts[0].Rounds) != "[3]" ||
		v.Hosts[1].Host != "gpu-b" || fmt.Sprint(v.Hosts[1].Rounds) != "[1 2 4]" {
		t.Fatalf("hosts %+v, want gpu-a with round 3 and gpu-b with rounds 1, 2, 4", v.Hosts)
	}
	if v.Hosts[1].RelativePct <= v.Hosts[0].RelativePct {
		t.Errorf("gpu-b (3%% faster) at %+.1f%%, gpu-a at %+.1f%%", v.Hosts[1].RelativePct, v.Hosts[0].RelativePct)
	}
	if !hasNote(v, CheckHosts, "gpu-a") || len(v.MixedHosts) != 0 {
		t.Errorf("notes %v, mixed %+v", v.Notes, v.MixedHosts)
	}
	for _, sc := range v.Scenarios {
		for _, li := range sc.Launches {
			if want := fleet[byRound(li.Round, 0)].Name; li.Host != want {
				t.Errorf("%s round %d: host %q, want %q", sc.Name, li.Round, li.Host, want)
			}
		}
	}
	for _, n := range v.Notes {
		if n.Check == CheckHosts {
			t.Log(n.Text)
		}
	}
}

// TestHostsMixedRoundCapacity: the capacities under an objective are paired
// by round as the throughputs are, and a round on two hosts is left out of
// their comparison too.
func TestHostsMixedRoundCapacity(t *testing.T) {
	s := sloSweep()
	place := func(r, i int) int {
		if r == 2 {
			return 1 - i
		}
		return 0
	}
	in := verdicttest.CampaignInput([]string{"baseline", "variant"}, s, 4,
		verdicttest.FleetCampaign([]verdicttest.Engine{realBaseline, realBaseline}, s, 4, fleet, place, 5))
	o := sloTestObjective
	in.Manifest.SLO = &o
	v, err := Judged(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Capacity == nil || len(v.Capacity.Comparisons) != 1 {
		t.Fatalf("capacity %+v", v.Capacity)
	}
	if c := v.Capacity.Comparisons[0]; c.Rounds != 3 {
		t.Errorf("capacity compared on %d rounds, want 3 (round 2 ran on two hosts)", c.Rounds)
	}
}
