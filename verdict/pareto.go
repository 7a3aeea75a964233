package verdict

import (
	"math"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// The Pareto frontier (docs/METHOD.md, "The Pareto frontier"): each
// scenario at each level is a point of throughput per GPU against output
// tokens per second per user, both better higher. A point is Pareto-optimal
// when no other point is at least as good on both and better on one; the
// optimal points, joined, are the best a deployment can buy of one for the
// other. It is how the field compares serving configurations of different
// sizes: SemiAnalysis' InferenceMAX (throughput per GPU against
// interactivity, 1/TPOT), vLLM's `vllm bench sweep plot_pareto`
// (tokens/s/GPU against tokens/s/user) and NVIDIA CloudAI's pareto.html.
// The frontier is drawn on the point estimates: it describes the run, it
// is not a test; the table's comparisons are.

// Pareto is a run's points and frontiers.
type Pareto struct {
	// PerGPU is true when every scenario's GPU count is known, so that
	// each point's TokS is per GPU; false when some count is not (a run
	// written before counts were recorded, hosts without a GPU), where
	// TokS is each server's whole throughput.
	PerGPU bool `json:"per_gpu"`
	// Points are every measured level of every scenario, in campaign then
	// level order.
	Points []ParetoPoint `json:"points"`
}

// ParetoPoint is one scenario at one level.
type ParetoPoint struct {
	Scenario string        `json:"scenario"`
	Level    measure.Level `json:"level"`
	// TokS is the level's throughput (the center of Level.Throughput) per
	// GPU, output tok/s; per server when Pareto.PerGPU is false.
	TokS float64 `json:"tok_s"`
	// PerUser is the level's output tokens per second per user
	// (Level.PerUser): one over the median TPOT.
	PerUser float64 `json:"tok_s_per_user"`
	// Own is true on the frontier of its scenario's points alone; Optimal
	// on the frontier of every scenario's points.
	Own     bool `json:"own_frontier"`
	Optimal bool `json:"optimal"`
	// Doubted is true when the level's measurement is doubted
	// (Level.Doubts): drawn, never on a frontier, as it is never decided.
	Doubted bool `json:"doubted,omitempty"`
}

// PerUser is the level's output tokens per second per user: one over its
// median time per output token (TPOT, from each request's first token to
// its last), the interactivity InferenceMAX plots (its `intvty`, 1000 over
// the TPOT in ms). It leaves out the wait for the first token, which the
// TTFT gives, and is the speed a reader sees the text stream at. ok is
// false when no request had two tokens.
func (l *Level) PerUser() (float64, bool) {
	if l.TPOT.N == 0 || !(l.TPOT.P50 > 0) {
		return 0, false
	}
	return 1 / l.TPOT.P50, true
}

// Optimal are the points on the overall frontier, by tokens per second per
// user ascending.
func (p *Pareto) Optimal() []ParetoPoint {
	var out []ParetoPoint
	for _, pt := range p.Points {
		if pt.Optimal {
			out = append(out, pt)
		}
	}
	slices.SortStableFunc(out, func(a, b ParetoPoint) int {
		return cmpFloat(a.PerUser, b.PerUser)
	})
	return out
}

// Point returns the point of scenario name at level, or nil.
func (p *Pareto) Point(name string, level measure.Level) *ParetoPoint {
	if p == nil {
		return nil
	}
	for i := range p.Points {
		if p.Points[i].Scenario == name && p.Points[i].Level == level {
			return &p.Points[i]
		}
	}
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// paretoOf places every measured, unsaturated level of every scenario that
// has both coordinates, and marks the frontiers; nil when none has.
func paretoOf(v *Verdict) *Pareto {
	p := &Pareto{PerGPU: true}
	for _, s := range v.Scenarios {
		if s.Failed() || len(s.Levels) == 0 {
			continue
		}
		p.PerGPU = p.PerGPU && s.GPUs > 0
	}
	for _, s := range v.Scenarios {
		if s.Failed() {
			continue
		}
		for i := range s.Levels {
			l := &s.Levels[i]
			perUser, ok := l.PerUser()
			if !ok || l.Saturated || !l.measured() || l.Throughput.N == 0 {
				continue
			}
			tok := l.Throughput.Center
			if p.PerGPU {
				tok /= float64(s.GPUs)
			}
			if !finitePositive(tok) || !finitePositive(perUser) {
				continue
			}
			p.Points = append(p.Points, ParetoPoint{Scenario: s.Name, Level: l.Level, TokS: tok, PerUser: perUser,
				Doubted: len(l.Doubts) > 0})
		}
	}
	if len(p.Points) == 0 {
		return nil
	}
	markFrontiers(p.Points)
	return p
}

func finitePositive(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

// markFrontiers sets Own and Optimal of every point that is not doubted.
func markFrontiers(pts []ParetoPoint) {
	all := make([]int, 0, len(pts))
	byScenario := map[string][]int{}
	for i, pt := range pts {
		if pt.Doubted {
			continue
		}
		all = append(all, i)
		byScenario[pt.Scenario] = append(byScenario[pt.Scenario], i)
	}
	for _, i := range frontier(pts, all) {
		pts[i].Optimal = true
	}
	for _, idx := range byScenario {
		for _, i := range frontier(pts, idx) {
			pts[i].Own = true
		}
	}
}

// frontier returns those of the points idx that no other of them
// dominates: at least as high on both coordinates and higher on one. Two
// points equal on both dominate neither, so both stay, as vLLM's
// plot_pareto keeps a tie. Quadratic, for the few hundred points a run has.
func frontier(pts []ParetoPoint, idx []int) []int {
	var out []int
	for _, i := range idx {
		a := pts[i]
		dominated := false
		for _, j := range idx {
			b := pts[j]
			if b.TokS >= a.TokS && b.PerUser >= a.PerUser && (b.TokS > a.TokS || b.PerUser > a.PerUser) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	return out
}
