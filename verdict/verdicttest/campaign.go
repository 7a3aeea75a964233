package verdicttest

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// Launch is one launch of one scenario in a simulated campaign.
type Launch struct {
	// Scenario is the index of the engine in the campaign's list.
	Scenario int
	// Round is 1-based; Order is the 0-based position of the launch in the
	// campaign's whole launch sequence.
	Round, Order int
	// Host names the fleet host the launch ran on (FleetCampaign); empty
	// for Campaign's one machine.
	Host    string
	Records []measure.Record
}

// DefaultLaunchGap is the simulated time between two launches, s: stopping
// one server and loading the next model.
const DefaultLaunchGap = 120

// RealisticNoise returns e with the noise the honesty tests assume of a real
// host: 1% launch-to-launch (σ of the per-launch speed factor) and a 1% slow
// drift with a 60 s correlation time, on top of e's per-step noise.
func RealisticNoise(e Engine) Engine {
	e.LaunchSigma, e.Drift, e.DriftTau = 0.01, 0.01, 60
	return e
}

// RoundOrder is the launch order of round r (1-based) over n scenarios:
// campaign order in odd rounds, reversed in even ones (A B C, C B A, …), so
// that a slow drift over the campaign falls on every scenario alike.
func RoundOrder(n, r int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	if r%2 == 0 {
		slices.Reverse(o)
	}
	return o
}

// Campaign runs rounds of launches of every engine, one after the other on
// one machine in RoundOrder, with DefaultLaunchGap between launches during
// which the machine's drift goes on. Every launch draws its own speed
// factor. It returns the launches in launch order.
func Campaign(engines []Engine, s Sweep, rounds int, seed uint64) []Launch {
	sweeps := make([]Sweep, rounds)
	for i := range sweeps {
		sweeps[i] = s
	}
	return CampaignRounds(engines, sweeps, seed)
}

// CampaignRounds is Campaign with a sweep of its own for each round (one
// round per sweep), as a planned campaign changes the requests per level
// between rounds; every scenario of a round gets the round's sweep.
func CampaignRounds(engines []Engine, sweeps []Sweep, seed uint64) []Launch {
	m := NewMachine()
	rng := rand.New(rand.NewPCG(seed, 0x51ed2701f3a5c9b1))
	var out []Launch
	for r := 1; r <= len(sweeps); r++ {
		s := sweeps[r-1]
		for _, i := range RoundOrder(len(engines), r) {
			e := engines[i]
			recs := SimulateOn(m, e, s, rng.Uint64())
			out = append(out, Launch{Scenario: i, Round: r, Order: len(out), Records: recs})
			m.T += DefaultLaunchGap
			m.Drift = e.drifted(m.Drift, DefaultLaunchGap, rng)
		}
	}
	return out
}

// FleetHost is one host of a simulated fleet.
type FleetHost struct {
	Name string
	// StepFactor multiplies every step time on the host (0.97: 3% faster).
	StepFactor float64
}

// FleetCampaign runs rounds of launches of every engine over a fleet: place
// gives the host (an index into hosts) of scenario i's launch in round r
// (1-based). A fleet that runs each round whole on one host gives the same
// host for every scenario of a round; one that places launches rather than
// rounds may not. Each host is its own Machine, with its own clock and
// drift, and its launches follow each other with DefaultLaunchGap between
// them, in RoundOrder within a round. It returns the launches in round
// order.
func FleetCampaign(engines []Engine, s Sweep, rounds int, hosts []FleetHost, place func(r, i int) int, seed uint64) []Launch {
	ms := make([]*Machine, len(hosts))
	for i, h := range hosts {
		ms[i] = NewMachine()
		ms[i].StepFactor = h.StepFactor
	}
	rng := rand.New(rand.NewPCG(seed, 0x51ed2701f3a5c9b1))
	var out []Launch
	for r := 1; r <= rounds; r++ {
		for _, i := range RoundOrder(len(engines), r) {
			h := place(r, i)
			m, e := ms[h], engines[i]
			recs := SimulateOn(m, e, s, rng.Uint64())
			out = append(out, Launch{Scenario: i, Round: r, Order: len(out), Host: hosts[h].Name, Records: recs})
			m.T += DefaultLaunchGap
			m.Drift = e.drifted(m.Drift, DefaultLaunchGap, rng)
		}
	}
	return out
}

// FleetLayout runs a campaign laid out as results rounds over a fleet, as
// a layout split over the hosts is: order[k] lists the engines (indices
// into engines) of round k+1 in launch order, and place(k+1) gives the host
// (an index into hosts) the round runs whole on. Each host is its own
// Machine, as in FleetCampaign. It returns the launches in round order.
func FleetLayout(engines []Engine, s Sweep, order [][]int, hosts []FleetHost, place func(round int) int, seed uint64) []Launch {
	ms := make([]*Machine, len(hosts))
	for i, h := range hosts {
		ms[i] = NewMachine()
		ms[i].StepFactor = h.StepFactor
	}
	rng := rand.New(rand.NewPCG(seed, 0x51ed2701f3a5c9b1))
	var out []Launch
	for k, row := range order {
		h := place(k + 1)
		m := ms[h]
		for _, i := range row {
			e := engines[i]
			recs := SimulateOn(m, e, s, rng.Uint64())
			out = append(out, Launch{Scenario: i, Round: k + 1, Order: len(out), Host: hosts[h].Name, Records: recs})
			m.T += DefaultLaunchGap
			m.Drift = e.drifted(m.Drift, DefaultLaunchGap, rng)
		}
	}
	return out
}

// CoverageCampaigns is how many campaigns each coverage figure is measured
// on: misses come in clusters (a campaign whose rounds happened to be
// lucky misses at several levels at once), so fewer make a noisy figure.
const CoverageCampaigns = 30

// TrueLogRatios is the engines' log throughput ratio (variant over base)
// per level of s, measured as the verdict measures a launch (steady-state
// tokens over the steady windows of the level's repeats) on launches
// without launch noise or drift, averaged over enough launches that its
// error is far below the intervals': the truth coverage is judged against.
func TrueLogRatios(base, variant Engine, s Sweep) map[measure.Level]float64 {
	quiet := func(e Engine) Engine { e.LaunchSigma, e.Drift = 0, 0; return e }
	const n = 20
	out := map[measure.Level]float64{}
	for i := range uint64(n) {
		for k, e := range []Engine{quiet(base), quiet(variant)} {
			for c, reps := range records.ByLevel(Simulate(e, s, 9000+2*i+uint64(k))) {
				var tok, sec float64
				for _, recs := range reps {
					tp := measure.LevelThroughput(recs, c, 1)
					tok, sec = tok+tp.Tokens, sec+tp.Window.Seconds()
				}
				if sec > 0 {
					out[c] += float64(2*k-1) * math.Log(tok/sec) / n
				}
			}
		}
	}
	return out
}
