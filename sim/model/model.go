package model

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
)

// Hardware constants of the performance model, in simulated time, for an
// 8-GPU tensor-parallel server of a large MoE model (the seeds' Kimi-K2.5 on
// 8× RTX PRO 6000 Blackwell). docs/SIM.md derives them from the seeds.
const (
	// referenceTP is the tensor parallelism the constants are measured at;
	// per-token and per-sequence costs scale with referenceTP/tp.
	referenceTP = 8
	// noGraphFactor multiplies a step whose batch exceeds cuda-graph-max-bs
	// (eager kernels instead of a captured graph).
	noGraphFactor = 1.04

	// prefillFixed and prefillPerToken price a prefill batch.
	prefillFixed    = 14 * time.Millisecond
	prefillPerToken = 60 * time.Microsecond

	// draftFixed and draftPerToken price one pass of the draft model (a
	// one-layer EAGLE head on b×topk tokens). A decode round runs it
	// max(steps, 1) times: steps−1 draft forwards and the draft extend after
	// the verify, which SGLang runs even with 0 steps, the adaptive
	// controller's "speculation off" candidate, to keep the draft KV cache
	// warm (python/sglang/srt/speculative/eagle_worker_v2.py,
	// forward_batch_generation and draft_forward).
	draftFixed    = 2 * time.Millisecond
	draftPerToken = 30 * time.Microsecond
	// treeFixed is the tree construction and sampling of topk>1 per step.
	treeFixed = 450 * time.Microsecond
	// noFusionAllreduce is the extra allreduce latency of a verify forward
	// without FlashInfer allreduce fusion (the seeds' 54→96 tok/s story);
	// whether fusion runs is SGLang's decision (fusion.go).
	noFusionAllreduce = 12 * time.Millisecond

	// acceptTop1 is the default probability that the drafter's top-1 guess
	// for a draft position is accepted (--sim-draft-accept changes it): 2.05
	// tokens a step with 3 steps, where vLLM's EAGLE-3 acceptance test
	// (tests/v1/spec_decode/test_acceptance_length.py) expects 1.35 to 2.60
	// of its drafters with 3 (Qwen3-VL-30B-A3B, a MoE, and Llama-3.1-8B).
	acceptTop1 = 0.56
)

// acceptWidthExp makes a wider draft tree more likely to hold the target's
// token: a tree w candidates wide at each depth misses it with probability
// (1−p1)·w^−acceptWidthExp. The exponent keeps the seeds' EAGLE-3 topk-4
// configuration (3 steps, 8 draft tokens: 7/3 wide) at the 1 − 0.44·4^−0.24
// = 0.6845 it was calibrated with, when the width was topk alone.
var acceptWidthExp = 0.24 * math.Log(4) / math.Log(7.0/3)

// Costs are the constants of the performance model that are fitted to the
// seeds (docs/SIM.md, Calibration; sim/calibration_test.go refits them and
// checks that these are its result). Simulated time at tp 8.
type Costs struct {
	// StepFixed is the fixed cost of one target-model decode forward:
	// kernel launches and the ~122 allreduces of a 61-layer model.
	StepFixed time.Duration
	// PerSeq is the per-sequence cost of a forward (KV-cache reads).
	PerSeq time.Duration
	// PerToken is the per-token compute of a forward (weights, MoE).
	PerToken time.Duration
	// VerifyExtra is what a verify forward costs above a decode forward:
	// extend-mode attention with a custom mask.
	VerifyExtra time.Duration
	// SpecV2Sync is the fixed per-step synchronisation of the spec-v2
	// overlap worker as it was in the seeds' build: it hides nothing at these
	// batch sizes and adds a sync, which is why topk=1 v2 trails at C=1.
	// Current SGLang runs that worker for every speculative server; the
	// synchronous path (--disable-overlap-schedule) is priced as the seeds'
	// classic worker, which never overlapped, without it.
	SpecV2Sync time.Duration
}

// fittedCosts are the model's costs: the first four fitted to the seeds'
// baseline and EAGLE-3 topk=4 figures, SpecV2Sync to the spec-v2 run's
// single-stream figure (docs/SIM.md says which figure checks what).
var fittedCosts = Costs{
	StepFixed:   9809 * time.Microsecond,
	PerSeq:      230 * time.Microsecond,
	PerToken:    734 * time.Microsecond,
	VerifyExtra: 2879 * time.Microsecond,
	SpecV2Sync:  1542 * time.Microsecond,
}

// Perf is the performance model of one server configuration. It is pure:
// given a batch it returns simulated durations and accept lengths.
type Perf struct {
	tp          int
	spec        bool
	steps       int
	topk        int
	draftTokens int
	specV2      bool // the overlap worker (Config.Overlap)
	fusion      bool
	graphMaxBS  int
	slowdown    float64
	noise       float64
	top1        float64 // the drafter's top-1 acceptance (--sim-draft-accept)
	acceptP     float64 // the per-position acceptance at the configured shape
	costs       Costs
	// plan is SGLang's adaptive speculative decoding (adaptive.go), nil
	// without: the steps change from round to round, each round verifying
	// steps+1 tokens.
	plan *cmdline.AdaptivePlan
	// decodeOnly is a disaggregated decode worker: its prompts arrive as
	// KV cache from a prefill worker (disagg.go), so admitting them runs no
	// forward.
	decodeOnly bool
}

// NewPerf builds the model for a configuration.
func NewPerf(c *cmdline.Config) Perf {
	p := Perf{
		tp:          c.TP,
		spec:        c.Speculative(),
		steps:       c.SpecSteps,
		topk:        max(1, c.SpecTopK),
		draftTokens: c.DraftTokens(),
		specV2:      c.Overlap(),
		fusion:      c.AllreduceFusion(),
		graphMaxBS:  c.DecodeGraphMaxBS(),
		slowdown:    c.Sim.Slowdown,
		noise:       c.Sim.Noise,
		top1:        c.Sim.DraftAccept,
		costs:       fittedCosts,
		plan:        c.Adaptive,
		decodeOnly:  c.Deploy.Decode(),
	}
	if p.slowdown <= 0 {
		p.slowdown = 1
	}
	if p.top1 <= 0 {
		p.top1 = acceptTop1
	}
	p.acceptP = acceptProb(p.top1, p.steps, p.topk, p.draftTokens)
	return p
}

// acceptProb is the probability that a draft position is accepted, given
// the one before it was: the target's token is among the tree's candidates
// at that depth. A tree of draftTokens−1 nodes over steps depths is on
// average (draftTokens−1)/steps wide, and at most topk (SGLang keeps the
// draftTokens−1 best of the topk-wide expansions: build_tree_kernel_efficient);
// a chain (topk 1) is 1 wide and accepts with top1. Wider accepts more, ever
// more slowly.
func acceptProb(top1 float64, steps, topk, draftTokens int) float64 {
	if steps <= 0 {
		return 0
	}
	w := min(float64(topk), max(1, float64(draftTokens-1)/float64(steps)))
	if w == 1 {
		return top1
	}
	return 1 - (1-top1)*math.Pow(w, -acceptWidthExp)
}

// Speculative reports whether steps emit several tokens.
func (p Perf) Speculative() bool { return p.spec }

// verifyTokens is the tokens each request verifies in a round of steps:
// the configured draft tokens, or steps+1 under the adaptive controller,
// which builds each candidate with steps+1 (adaptive_runtime_state.py).
func (p Perf) verifyTokens(steps int) int {
	if p.plan != nil {
		return steps + 1
	}
	return p.draftTokens
}

// acceptAt is the per-position acceptance of a round of steps, and depth
// the most drafts it can accept: a tree of fewer nodes than steps cannot
// reach the last depth.
func (p Perf) acceptAt(steps int) (prob float64, depth int) {
	d := p.verifyTokens(steps)
	prob = p.acceptP
	if steps != p.steps {
		prob = acceptProb(p.top1, steps, p.topk, d)
	}
	return prob, max(0, min(steps, d-1))
}

// MeanAccept is the expected accept length: 1 + p + p² + … + p^steps.
func (p Perf) MeanAccept() float64 { return p.meanAcceptAt(p.steps) }

// meanAcceptAt is MeanAccept for a round of steps: the accepted drafts are
// a run of positions each accepted with the same probability (vLLM's EAGLE-3
// acceptance test, tests/v1/spec_decode/test_acceptance_length.py, has its
// drafters' per-position figures fall so: 0.73, 0.52, 0.35 for Llama-3.1-8B),
// so each step adds less than the one before.
func (p Perf) meanAcceptAt(steps int) float64 {
	if !p.spec {
		return 1
	}
	prob, depth := p.acceptAt(steps)
	m, term := 1.0, 1.0
	for range depth {
		term *= prob
		m += term
	}
	return m
}

func (p Perf) scaled(d time.Duration) float64 {
	return float64(d) * float64(referenceTP) / float64(max(1, p.tp))
}

// DecodeStep is the noise-free simulated time of one decode step with batch
// running requests: one forward without speculation; draft steps plus a
// verify of batch×draft-tokens with it.
func (p Perf) DecodeStep(batch int) time.Duration { return p.decodeStepAt(batch, p.steps) }

// decodeStepAt is DecodeStep for a speculative round of steps. The draft
// costs steps × batch × topk (each pass drafts topk tokens a request), the
// verify batch × draft tokens of compute over a fixed forward: the more
// requests, the more every extra step and draft token costs.
func (p Perf) decodeStepAt(batch, steps int) time.Duration {
	if batch <= 0 {
		return 0
	}
	b := float64(batch)
	var t float64
	if !p.spec {
		t = float64(p.costs.StepFixed) + b*(p.scaled(p.costs.PerSeq)+p.scaled(p.costs.PerToken))
	} else {
		draft := float64(max(steps, 1)) * (float64(draftFixed) + b*float64(p.topk)*p.scaled(draftPerToken))
		verify := float64(p.costs.StepFixed+p.costs.VerifyExtra) + b*p.scaled(p.costs.PerSeq) + b*float64(p.verifyTokens(steps))*p.scaled(p.costs.PerToken)
		if !p.fusion {
			verify += float64(noFusionAllreduce)
		}
		t = draft + verify
		if p.topk > 1 {
			t += float64(treeFixed)
		}
		if p.specV2 {
			t += float64(p.costs.SpecV2Sync)
		}
	}
	if batch > p.graphMaxBS {
		t *= noGraphFactor
	}
	return time.Duration(t * p.slowdown)
}

// PrefillStep is the simulated time of a prefill batch of promptTokens
// tokens (the draft model prefills too when speculating); none on a decode
// worker, whose prompts were prefilled elsewhere.
func (p Perf) PrefillStep(promptTokens int) time.Duration {
	if p.decodeOnly {
		return 0
	}
	t := float64(prefillFixed) + float64(promptTokens)*p.scaled(prefillPerToken)
	if p.spec {
		t += float64(draftFixed)
	}
	return time.Duration(t * p.slowdown)
}

// Noisy multiplies d by a seeded log-normal factor of relative σ noise.
func (p Perf) Noisy(d time.Duration, rng *rand.Rand) time.Duration {
	if p.noise <= 0 {
		return d
	}
	return time.Duration(float64(d) * math.Exp(p.noise*rng.NormFloat64()-p.noise*p.noise/2))
}

// DrawAccept draws one request's accept length for one step: 1 plus the
// number of leading draft positions accepted, at most steps (or draft
// tokens − 1, if fewer) + 1.
func (p Perf) DrawAccept(rng *rand.Rand) int { return p.drawAcceptAt(p.steps, rng) }

func (p Perf) drawAcceptAt(steps int, rng *rand.Rand) int {
	if !p.spec {
		return 1
	}
	prob, depth := p.acceptAt(steps)
	n := 1
	for range depth {
		if rng.Float64() >= prob {
			break
		}
		n++
	}
	return n
}
