package selection

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// A fast generator of races: one figure per launch and level, no engine
// simulated. A launch's log throughput at a level is its configuration's
// true mean there, plus a launch effect shared by all its levels, plus the
// host's slow drift at the launch's place in the night (a wandering drift
// that keeps part of itself from one launch to the next, or a random walk),
// plus the round's prompts at that level (common random numbers: the same
// for every launch of the round), plus noise of its own at each level.
// Launches follow each round's counterbalanced order (verdicttest.RoundOrder
// over all the configurations, the stopped ones left out), so the drift
// between two configurations' launches changes from round to round as it
// does in a campaign.

// noise is one kind of host, in log throughput.
type noise struct {
	name       string
	launchSD   float64 // each launch's effect on all its levels
	levelSD    float64 // each level of a launch on its own
	crnSD      float64 // each round's prompts at a level, shared by its launches
	wanderSD   float64 // a drift that wanders (Ornstein–Uhlenbeck)...
	wanderKeep float64 // ...keeping this share of itself from launch to launch
	walkSD     float64 // a drift that is a random walk: its step per launch
	heavy      bool    // launch effects and level noise Student t(3), not normal
}

// noises are the hosts studied: launch effects of 1%, 2% and 3% with a
// wandering drift, the 2% host with a random walk instead, and with
// heavy tails.
var noises = []noise{
	{name: "launch 1%, wandering drift", launchSD: 0.01, levelSD: 0.005, crnSD: 0.005, wanderSD: 0.01, wanderKeep: 0.8},
	{name: "launch 2%, wandering drift", launchSD: 0.02, levelSD: 0.005, crnSD: 0.005, wanderSD: 0.01, wanderKeep: 0.8},
	{name: "launch 3%, wandering drift", launchSD: 0.03, levelSD: 0.005, crnSD: 0.005, wanderSD: 0.01, wanderKeep: 0.8},
	{name: "launch 2%, random-walk drift", launchSD: 0.02, levelSD: 0.005, crnSD: 0.005, walkSD: 0.003},
	{name: "launch 2%, t(3) tails, wandering drift", launchSD: 0.02, levelSD: 0.005, crnSD: 0.005, wanderSD: 0.01, wanderKeep: 0.8, heavy: true},
}

// host draws launches on one simulated host.
type host struct {
	nz     noise
	truth  [][]float64 // [config][level]
	rng    *rand.Rand
	round  int     // rounds launched
	wander float64 // the drifts now
	walk   float64
}

func newHost(nz noise, truth [][]float64, seed uint64) *host {
	rng := rand.New(rand.NewPCG(seed, 0x5e1ec7))
	return &host{nz: nz, truth: truth, rng: rng, wander: nz.wanderSD * rng.NormFloat64()}
}

// draw is one unit draw: normal, or t(3) scaled to variance 1.
func (h *host) draw() float64 {
	z := h.rng.NormFloat64()
	if !h.nz.heavy {
		return z
	}
	var chi float64
	for range 3 {
		x := h.rng.NormFloat64()
		chi += x * x
	}
	return z / math.Sqrt(chi/3) / math.Sqrt(3)
}

// launch runs the next round with the configurations in launch (indices
// into truth) and returns its figures.
func (h *host) launch(launch []int) Round {
	h.round++
	nl := len(h.truth[0])
	crn := make([]float64, nl)
	for c := range crn {
		crn[c] = h.nz.crnSD * h.rng.NormFloat64()
	}
	in := make([]bool, len(h.truth))
	for _, i := range launch {
		in[i] = true
	}
	out := make(Round, len(h.truth))
	for _, i := range verdicttest.RoundOrder(len(h.truth), h.round) {
		if !in[i] {
			continue
		}
		k := h.nz.wanderKeep
		h.wander = k*h.wander + math.Sqrt(1-k*k)*h.nz.wanderSD*h.rng.NormFloat64()
		h.walk += h.nz.walkSD * h.rng.NormFloat64()
		u := h.nz.launchSD*h.draw() + h.wander + h.walk
		row := make([]float64, nl)
		for c := range row {
			row[c] = h.truth[i][c] + u + crn[c] + h.nz.levelSD*h.draw()
		}
		out[i] = row
	}
	return out
}

// all is every configuration of k.
func all(k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = i
	}
	return out
}

// The spaces raced. Each is a truth [config][level] of log throughput.

// studyLevels is the concurrency levels of the synthetic spaces.
var studyLevels = []int{1, 4, 16, 64}

func levelNames() []string {
	out := make([]string, len(studyLevels))
	for c, l := range studyLevels {
		out[c] = fmt.Sprintf("C=%d", l)
	}
	return out
}

func configNames(k int) []string {
	out := make([]string, k)
	for i := range out {
		out[i] = fmt.Sprintf("cfg%02d", i)
	}
	return out
}

// flat is a truth with the same means at every level.
func flat(means []float64) [][]float64 {
	out := make([][]float64, len(means))
	for i, m := range means {
		out[i] = make([]float64, len(studyLevels))
		for c := range out[i] {
			out[i][c] = m
		}
	}
	return out
}

// slippage is k configurations, the best exactly delta above all the
// others. The best is the last in campaign order: the reversed rounds
// launch it last in one round and first in the next, so the drift's
// correlation of consecutive rounds falls on it.
func slippage(k int, delta float64) [][]float64 {
	m := make([]float64, k)
	for i := range m {
		m[i] = -math.Log1p(delta)
	}
	m[k-1] = 0
	return flat(m)
}

// twoApart is the best and one other exactly delta apart, the rest 20%
// behind.
func twoApart(k int, delta float64) [][]float64 {
	m := make([]float64, k)
	for i := range m {
		m[i] = math.Log(0.8)
	}
	m[k-1], m[k/2] = 0, -math.Log1p(delta)
	return flat(m)
}

// equal is k configurations alike.
func equal(k int) [][]float64 { return flat(make([]float64, k)) }

// speculative is a space shaped like EAGLE-3's: steps 1..6 × topk 1, 2, 4,
// 8 (24 configurations), and with two draft-token budgets 48. Each verify
// pass of the target accepts a chain whose tokens are accepted with a
// probability that grows with topk; it costs a memory-bound step, the draft
// steps, and compute for every verified token of every sequence in the
// batch, which is what makes long drafts lose under load. The best is 5–6
// steps at C=1 and 2 steps of topk 1 at C=64, with neighbours 1–5% apart.
func speculative(budgets int) (truth [][]float64, names []string) {
	for b := range budgets {
		for s := 1; s <= 6; s++ {
			for _, t := range []int{1, 2, 4, 8} {
				p := 0.55 + 0.06*math.Log2(float64(t))
				tokens, draft := s*t, 0.06
				if b == 1 { // a narrow budget: fewer tokens verified and accepted, a cheaper draft
					tokens = min(tokens, 2*s)
					p -= 0.03 * math.Log2(float64(t))
					draft = 0.05
				}
				accepted := (1 - math.Pow(p, float64(s+1))) / (1 - p)
				row := make([]float64, len(studyLevels))
				for c, conc := range studyLevels {
					step := 1 + 0.004*float64(conc) + draft*float64(s) + 0.0025*float64(conc*(tokens+1))
					row[c] = math.Log(float64(conc) * accepted / step)
				}
				truth = append(truth, row)
				names = append(names, fmt.Sprintf("s%d-k%d-b%d", s, t, b))
			}
		}
	}
	return truth, names
}
