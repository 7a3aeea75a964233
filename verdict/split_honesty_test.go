package verdict

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// Rounds split over a fleet (campaign.SplitLayout): the baseline and two
// variants, DefaultRounds rounds on twelve hosts, laid out as two parts per
// round, each part the baseline and one variant, round k on host k−1 mod
// 12. The first part of every round lands on an even host, the second on
// an odd one, and the even hosts are 3% faster (each host a little
// different besides): a fleet where a variant's host and the baseline's
// differ systematically unless each variant is paired with the baseline of
// its own part. BAKEOFF_SPLIT_CAMPAIGNS=N runs N campaigns per figure
// instead of the few make test runs (docs/METHOD.md gives a long run).

// splitFleet is the twelve hosts: even ones 3% faster, each ±1% besides.
var splitFleet = func() []verdicttest.FleetHost {
	var out []verdicttest.FleetHost
	for i := range 12 {
		f := 1 + 0.01*float64(i%3-1)
		if i%2 == 0 {
			f /= 1.03
		}
		out = append(out, verdicttest.FleetHost{Name: fmt.Sprintf("gpu-%02d", i), StepFactor: f})
	}
	return out
}()

// splitCampaigns is how many campaigns a figure is measured on: n, or
// BAKEOFF_SPLIT_CAMPAIGNS when set.
func splitCampaigns(n int) int {
	if k, err := strconv.Atoi(os.Getenv("BAKEOFF_SPLIT_CAMPAIGNS")); err == nil && k > 0 {
		return k
	}
	return n
}

// splitSeed is the first seed of the split campaigns.
const splitSeed = 3001

var splitNames = []string{"baseline", "a", "b"}

// simulateSplit runs one split campaign of the baseline and variants a and
// b. With broken set the verdict is given a wrong pairing: each variant's
// launch is moved into the other part of its round, with the hosts left
// unnamed, so that it is paired with the baseline launched on another host.
func simulateSplit(t *testing.T, a, b verdicttest.Engine, seed uint64, broken bool, o Options) *Verdict {
	t.Helper()
	l := campaign.SplitLayout(splitNames, "baseline", DefaultRounds, len(splitFleet))
	if l.Parts(1) != 2 {
		t.Fatalf("layout %+v: want two parts per round", l)
	}
	order := make([][]int, len(l.Order))
	for k, row := range l.Order {
		for _, name := range row {
			order[k] = append(order[k], slices.Index(splitNames, name))
		}
	}
	s := honestySweep()
	place := func(round int) int { return (round - 1) % len(splitFleet) }
	ls := verdicttest.FleetLayout([]verdicttest.Engine{realBaseline, a, b}, s, order, splitFleet, place, seed)
	if broken {
		for i := range ls {
			ls[i].Host = ""
			if ls[i].Scenario != 0 {
				ls[i].Round += 1 - 2*((ls[i].Round-1)%2) // the other part of its round
			}
		}
	}
	in := verdicttest.CampaignInput(splitNames, s, DefaultRounds, ls)
	in.Manifest.Replicates = l.Replicates
	v, err := Judged(in, o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// splitTally counts campaigns and the variants' levels over split runs.
type splitTally struct {
	campaigns, named        int // campaigns with a winner, faster or slower anywhere
	levels, slower, faster  int
	covered, withTruth      int
	rounds, parts, shortage int // campaigns whose counts were wrong
}

func (st *splitTally) add(v *Verdict, truth map[string]map[measure.Level]float64) {
	st.campaigns++
	named := false
	for _, row := range v.Rows {
		named = named || row.Winner != ""
		for _, name := range splitNames[1:] {
			c := v.Cell(row.Level, name)
			if c == nil || !c.Compared {
				continue
			}
			st.levels++
			switch c.Outcome {
			case OutcomeFaster:
				st.faster++
				named = true
			case OutcomeSlower:
				st.slower++
				named = true
			}
			if r, ok := truth[name][row.Level]; ok {
				st.withTruth++
				if c.SpeedupLo <= r && r <= c.SpeedupHi {
					st.covered++
				}
			}
		}
	}
	if named {
		st.named++
	}
	if v.Rounds != DefaultRounds || v.RoundsCompleted != DefaultRounds {
		st.rounds++
	}
	if v.Parts != 2*DefaultRounds {
		st.parts++
	}
	for _, n := range v.Notes {
		if n.Check == CheckRounds && n.Severity == SeverityWarn {
			st.shortage++
		}
	}
}

func (st splitTally) String() string {
	return fmt.Sprintf("%d campaigns: a winner in %d (%.1f%%); %d levels: slower %d, faster %d; interval holds the truth at %d of %d",
		st.campaigns, st.named, 100*float64(st.named)/float64(max(st.campaigns, 1)), st.levels, st.slower, st.faster, st.covered, st.withTruth)
}

// checkCounts fails when a split run's rounds were not counted as its
// replicates, or its baseline's extra launches read as a shortfall.
func (st splitTally) checkCounts(t *testing.T) {
	t.Helper()
	if st.rounds > 0 || st.parts > 0 || st.shortage > 0 {
		t.Errorf("rounds wrong in %d campaigns, parts in %d, a shortfall noted %d times: the rounds are the %d replicates, split into %d parts",
			st.rounds, st.parts, st.shortage, DefaultRounds, 2*DefaultRounds)
	}
}

// TestHonestySplitAA: two A/A variants, each in its own part of every
// round, on hosts whose speed follows the part: each paired with the
// baseline on its own host (and with each other through the baseline), a
// winner is named in no more than 5% of campaigns.
func TestHonestySplitAA(t *testing.T) {
	syntheticCampaigns(t)
	var st splitTally
	for k := range uint64(splitCampaigns(40)) {
		st.add(simulateSplit(t, realBaseline, realBaseline, splitSeed+k, false, Options{}), nil)
	}
	t.Logf("split A/A, %d rounds in %d parts over %d hosts: %s", DefaultRounds, 2*DefaultRounds, len(splitFleet), st)
	st.checkCounts(t)
	if st.named*20 > st.campaigns {
		t.Errorf("a winner in %d of %d campaigns, want ≤ 5%%", st.named, st.campaigns)
	}
}

// TestHonestySplitBroken: the same campaigns with each variant paired with
// the baseline launched on another host (the other part's) count the
// hosts' 3% as a difference and fail the A/A bound.
func TestHonestySplitBroken(t *testing.T) {
	syntheticCampaigns(t)
	var st splitTally
	for k := range uint64(splitCampaigns(10)) {
		st.add(simulateSplit(t, realBaseline, realBaseline, splitSeed+k, true, Options{}), nil)
	}
	t.Logf("split A/A paired across hosts: %s", st)
	if st.named*20 <= st.campaigns {
		t.Errorf("a winner in only %d of %d campaigns: the broken pairing passed the A/A bound", st.named, st.campaigns)
	}
}

// TestHonestySplitPowerCoverage: variant a truly 5% slower, b EAGLE-3-like
// (unlike engines): a is found slower at 80% or more of its levels and never
// faster, and the intervals of both hold the truth at 90% or more.
func TestHonestySplitPowerCoverage(t *testing.T) {
	syntheticCampaigns(t)
	slow := realBaseline
	slow.Slowdown = 1.05
	unlike := verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)
	truth := map[string]map[measure.Level]float64{"a": trueRatios(realBaseline, slow), "b": trueRatios(realBaseline, unlike)}
	var st, slowOnly splitTally
	for k := range uint64(splitCampaigns(15)) {
		v := simulateSplit(t, slow, unlike, splitSeed+500+k, false, Options{})
		st.add(v, truth)
		for _, row := range v.Rows {
			if c := v.Cell(row.Level, "a"); c != nil && c.Compared {
				slowOnly.levels++
				switch c.Outcome {
				case OutcomeSlower:
					slowOnly.slower++
				case OutcomeFaster:
					slowOnly.faster++
				}
			}
		}
	}
	t.Logf("split, a 5%% slower and b unlike: %s; a slower at %d of %d levels", st, slowOnly.slower, slowOnly.levels)
	st.checkCounts(t)
	if slowOnly.slower*100 < 80*slowOnly.levels || slowOnly.faster > 0 {
		t.Errorf("a found slower at %d of %d levels and faster at %d, want ≥ 80%% and none", slowOnly.slower, slowOnly.levels, slowOnly.faster)
	}
	if st.covered*100 < 90*st.withTruth {
		t.Errorf("the interval holds the truth at %d of %d levels, want ≥ 90%%", st.covered, st.withTruth)
	}
}

// TestSplitSequential: a sequential plan over split rounds looks after each
// replicate, not each part: a variant 50% slower stops before the last
// round, having taken one launch in each round it ran, its comparisons
// decided after that round on that many rounds; the cost counts the
// baseline's launch in every part as the fixed design's.
func TestSplitSequential(t *testing.T) {
	slow := realBaseline
	slow.Slowdown = 1.5
	plan := SequentialPlan{MinRounds: 3, MaxRounds: DefaultRounds}
	v := simulateSplit(t, slow, realBaseline, splitSeed, false, Options{Sequential: &plan})
	if v.Sequential == nil || len(v.Sequential.Variants) != 2 {
		t.Fatalf("sequential %+v", v.Sequential)
	}
	a := v.Sequential.Variants[0]
	if !a.Stopped || a.StoppedAfter >= DefaultRounds || a.Rounds != a.StoppedAfter ||
		a.Reason != fmt.Sprintf("decided after %d rounds", a.StoppedAfter) {
		t.Errorf("a: %+v, want stopped before round %d with one launch a round", a, DefaultRounds)
	}
	for _, row := range v.Rows {
		if c := v.Cell(row.Level, "a"); c.DecidedAtRound != a.StoppedAfter || c.Rounds != a.StoppedAfter {
			t.Errorf("%s: a decided after round %d on %d rounds, want %d", measure.LevelName(row.Level), c.DecidedAtRound, c.Rounds, a.StoppedAfter)
		}
	}
	if b := v.Sequential.Variants[1]; b.Rounds > DefaultRounds {
		t.Errorf("b counted %d rounds of %d", b.Rounds, DefaultRounds)
	}
	cost := Cost(v, nil)
	if want := 4 * DefaultRounds; cost.FixedLaunches != want {
		t.Errorf("fixed design %d launches, want %d (two variants, the baseline in each of two parts)", cost.FixedLaunches, want)
	}
}
