package plan

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// The synthetic engines of the end-to-end tests: an A/A pair of the
// baseline model on two levels, once with most of a round's variance from
// sampling within a launch (a fast drift that a longer level averages out,
// ±7% round sd at auto requests, as the real llama-server A/A measured) and
// once with most of it from the launch itself.
var (
	e2eSweep = verdicttest.Sweep{Concurrency: []int{2, 4}, MaxTokens: 64, Warmup: 2, Repeats: 1,
		Prompts: 100, PromptSet: "sha256:synthetic", Speed: 1}
	withinNoisy = func() verdicttest.Engine {
		e := verdicttest.Baseline
		e.LaunchSigma, e.Drift, e.DriftTau = 0.005, 0.4, 0.1
		return e
	}()
	launchNoisy = func() verdicttest.Engine {
		e := verdicttest.Baseline
		e.LaunchSigma = 0.05
		return e
	}()
)

// e2eRounds are the pilot rounds before the planner is asked;
// e2eMarginPct the equivalence margin the campaigns aim at, e2eBudget
// their time, s of virtual time.
const (
	e2eRounds    = 3
	e2eMarginPct = 6
	e2eBudget    = 6 * 3600
	// e2eLoad is what a launch costs besides its requests, s: a real
	// model's load (the simulated engine's virtual time between launches
	// is shorter, which matters only to its slow drift).
	e2eLoad = 600
)

// simulate runs an A/A campaign of the engine with one sweep per round and
// returns the verdict and each launch's result with its phase seconds
// (e2eLoad as the launch's fixed part, the records' span as the sweep).
func simulate(t *testing.T, e verdicttest.Engine, sweeps []verdicttest.Sweep, seed uint64) (*verdict.Verdict, []results.ScenarioResult) {
	t.Helper()
	launches := verdicttest.CampaignRounds([]verdicttest.Engine{e, e}, sweeps, seed)
	per := [][][]measure.Record{make([][]measure.Record, len(sweeps)), make([][]measure.Record, len(sweeps))}
	var res []results.ScenarioResult
	for _, l := range launches {
		per[l.Scenario][l.Round-1] = l.Records
		first, last := l.Records[0].SendNs, l.Records[0].EndNs
		for _, r := range l.Records {
			first, last = min(first, r.SendNs), max(last, r.EndNs)
		}
		res = append(res, results.ScenarioResult{Status: results.StatusOK, Round: l.Round,
			PhaseSeconds: map[string]float64{"launch": e2eLoad, "sweep": float64(last-first) / 1e9}})
	}
	m := verdicttest.Manifest("plan", "20260101T000000Z", "sha256:plan", "a", e2eSweep, "a", "b")
	m.Rounds = len(sweeps)
	run, err := verdicttest.WriteRun(filepath.Join(t.TempDir(), fmt.Sprint(seed)), m,
		[]verdicttest.Scenario{{Name: "a", Rounds: per[0]}, {Name: "b", Rounds: per[1]}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := judge.Run(run, verdict.Options{EquivalenceMarginPct: e2eMarginPct})
	if err != nil {
		t.Fatal(err)
	}
	return v, res
}

// worstMDE is the largest detectable difference over the variant's
// levels, percent, recovered from each comparison's 95% interval and df as
// the verdict states it: (t(1 − α/2m) + t(0.8))·SE.
func worstMDE(v *verdict.Verdict) float64 {
	worst := 0.0
	for _, row := range v.Rows {
		for _, cell := range row.Cells {
			c := cell.Comparison
			if !cell.Compared {
				continue
			}
			if c.DF <= 0 || c.SpeedupHi <= c.SpeedupLo {
				return math.Inf(1)
			}
			t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: c.DF}
			se := (math.Log(c.SpeedupHi) - math.Log(c.SpeedupLo)) / (2 * t.Quantile(0.975))
			k := t.Quantile(1-v.Alpha/(2*float64(v.Comparisons))) + t.Quantile(DefaultPower)
			worst = math.Max(worst, pctOf(k*se))
		}
	}
	return worst
}

// pilotPlan runs the pilot rounds at the `auto` counts and asks the
// planner for the rest, from what they measured.
func pilotPlan(t *testing.T, e verdicttest.Engine, seed uint64) (Inputs, Plan) {
	t.Helper()
	sweeps := make([]verdicttest.Sweep, e2eRounds)
	past := make([][]int, e2eRounds)
	bounds := map[measure.Level]Level{}
	for i := range sweeps {
		sweeps[i] = e2eSweep
		for _, c := range e2eSweep.Concurrency {
			past[i] = append(past[i], e2eSweep.RequestsFor(c))
			bounds[measure.ConcurrencyLevel(c)] = Level{Min: e2eSweep.RequestsFor(c)}
		}
	}
	v, res := simulate(t, e, sweeps, seed)
	in := Observed(v, res, past, bounds, All, Goal{MaxRounds: 40})
	return in, Next(in)
}

// TestPlannerWithinNoise: where sampling within a launch dominates, the
// planner raises the requests, and campaigns run to its plan (updated
// after every round from what was measured, as a campaign would) reach the
// margin within the budget where the fixed design given the same time
// does not.
func TestPlannerWithinNoise(t *testing.T) {
	in, p := pilotPlan(t, withinNoisy, 2)
	t.Logf("after the pilot: %s", p)
	for j, l := range in.Levels {
		if p.Requests[j] < 4*l.Min {
			t.Errorf("%s: %d requests, want at least 4× the minimum %d", l.Key, p.Requests[j], l.Min)
		}
	}
	auto := make([]int, len(in.Levels))
	for j, l := range in.Levels {
		auto[j] = l.Min
	}
	fixedRounds := int(e2eBudget / in.RoundSeconds(auto))

	const campaigns = 6
	var reachedPlan, reachedFixed int
	var sumPlan, sumFixed float64
	for k := range campaigns {
		seed := uint64(100 + k)
		mp, rounds := planned(t, withinNoisy, seed)
		var sf []verdicttest.Sweep
		for range fixedRounds {
			sf = append(sf, e2eSweep)
		}
		vf, _ := simulate(t, withinNoisy, sf, seed)
		mf := worstMDE(vf)
		t.Logf("campaign %d: planned ±%.2f%% after %d rounds; fixed ±%.2f%% after %d", k, mp, rounds, mf, fixedRounds)
		sumPlan += mp
		sumFixed += mf
		if mp <= e2eMarginPct {
			reachedPlan++
		}
		if mf <= e2eMarginPct {
			reachedFixed++
		}
	}
	t.Logf("in %s: MDE ≤ ±%d%% planned in %d of %d campaigns (mean ±%.2f%%), fixed (%d rounds at auto) in %d (mean ±%.2f%%)",
		Duration(e2eBudget), e2eMarginPct, reachedPlan, campaigns, sumPlan/campaigns, fixedRounds, reachedFixed, sumFixed/campaigns)
	if reachedPlan < campaigns*2/3 || reachedFixed > campaigns/3 || sumPlan >= sumFixed {
		t.Errorf("planned design reached the margin in %d of %d, the fixed one in %d", reachedPlan, campaigns, reachedFixed)
	}
}

// planned runs a campaign as the planner directs it: the pilot rounds at
// the `auto` counts, then round after round at the requests Next chooses
// from everything measured so far, until the worst MDE reaches the margin
// or the next round would not fit in the budget. It returns the final MDE,
// percent, and the rounds run.
func planned(t *testing.T, e verdicttest.Engine, seed uint64) (float64, int) {
	t.Helper()
	var sweeps []verdicttest.Sweep
	var past [][]int
	bounds := map[measure.Level]Level{}
	for range e2eRounds {
		sweeps = append(sweeps, e2eSweep)
		var r []int
		for _, c := range e2eSweep.Concurrency {
			r = append(r, e2eSweep.RequestsFor(c))
			bounds[measure.ConcurrencyLevel(c)] = Level{Min: e2eSweep.RequestsFor(c)}
		}
		past = append(past, r)
	}
	for {
		v, res := simulate(t, e, sweeps, seed)
		mde := worstMDE(v)
		var elapsed float64
		for _, l := range res {
			for _, s := range l.PhaseSeconds {
				elapsed += s
			}
		}
		if testing.Verbose() {
			c := v.Rows[0].Cells[1].Comparison
			t.Logf("  round %d (%v): sd %.2f%% df %.1f within %.2f, mde ±%.2f%%, %.0fs", len(sweeps), past[len(past)-1], c.RoundSDPct, c.DF, c.WithinShare, mde, elapsed)
		}
		if mde <= e2eMarginPct {
			return mde, len(sweeps)
		}
		p := Next(Observed(v, res, past, bounds, All, Goal{MaxRounds: 40}))
		if elapsed+p.RoundSeconds > e2eBudget {
			return mde, len(sweeps)
		}
		s := e2eSweep
		s.LevelRequests = map[int]int{}
		for j, key := range p.Levels {
			s.LevelRequests[key.Concurrency] = p.Requests[j]
		}
		sweeps = append(sweeps, s)
		past = append(past, p.Requests)
	}
}

// TestPlannerLaunchNoise: where the launches dominate, the planner keeps
// the requests near the minimum and adds rounds instead.
func TestPlannerLaunchNoise(t *testing.T) {
	in, p := pilotPlan(t, launchNoisy, 1)
	_, pw := pilotPlan(t, withinNoisy, 1)
	t.Logf("observed: launch %.0fs, levels %+v, noise %+v", in.Launch, in.Levels, in.Noise)
	t.Logf("%s", p)
	for j, l := range in.Levels {
		if p.Requests[j] > 2*l.Min {
			t.Errorf("%s: %d requests, want at most 2× the minimum %d", l.Key, p.Requests[j], l.Min)
		}
	}
	if p.Rounds <= pw.Rounds {
		t.Errorf("launch noise: %d rounds, no more than where sampling dominates (%d)", p.Rounds, pw.Rounds)
	}
}
