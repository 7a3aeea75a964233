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

	// draftFixed and draftPerToken price one draft-model step (a one-layer
	// EAGLE head on b×topk tokens).
	draftFixed    = 2 * time.Millisecond
	draftPerToken = 30 * time.Microsecond
	// treeFixed is the tree construction and sampling of topk>1 per step.
	treeFixed = 450 * time.Microsecond
	// noFusionAllreduce is the extra allreduce latency of a verify forward
	// without FlashInfer allreduce fusion (the seeds' 54→96 tok/s story);
	// whether fusion runs is SGLang's decision (fusion.go).
	noFusionAllreduce = 12 * time.Millisecond

	// acceptTop1 is the probability that the drafter's top-1 guess for the
	// next position is accepted; acceptTreeExp makes a topk-wide tree more
	// likely to contain the right token: p(k) = 1 − (1−p1)·k^(−exp).
	acceptTop1    = 0.56
	acceptTreeExp = 0.24
)

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
	acceptP     float64
	costs       Costs
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
		costs:       fittedCosts,
		decodeOnly:  c.Deploy.Decode(),
	}
	if p.slowdown <= 0 {
		p.slowdown = 1
	}
	p.acceptP = 1 - (1-acceptTop1)*math.Pow(float64(p.topk), -acceptTreeExp)
	return p
}

// Speculative reports whether steps emit several tokens.
func (p Perf) Speculative() bool { return p.spec }

// MeanAccept is the expected accept length: 1 + p + p² + … + p^steps.
func (p Perf) MeanAccept() float64 {
	if !p.spec {
		return 1
	}
	m, term := 1.0, 1.0
	for range p.steps {
		term *= p.acceptP
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
func (p Perf) DecodeStep(batch int) time.Duration {
	if batch <= 0 {
		return 0
	}
	b := float64(batch)
	var t float64
	if !p.spec {
		t = float64(p.costs.StepFixed) + b*(p.scaled(p.costs.PerSeq)+p.scaled(p.costs.PerToken))
	} else {
		draft := float64(p.steps) * (float64(draftFixed) + b*float64(p.topk)*p.scaled(draftPerToken))
		verify := float64(p.costs.StepFixed+p.costs.VerifyExtra) + b*p.scaled(p.costs.PerSeq) + b*float64(p.draftTokens)*p.scaled(p.costs.PerToken)
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
// number of leading draft positions accepted, at most steps+1.
func (p Perf) DrawAccept(rng *rand.Rand) int {
	if !p.spec {
		return 1
	}
	n := 1
	for range p.steps {
		if rng.Float64() >= p.acceptP {
			break
		}
		n++
	}
	return n
}
