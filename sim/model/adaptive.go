package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
)

// adaptiveSteps is SGLang's adaptive speculative decoding at run time
// (--speculative-adaptive; cmdline/adaptive.go resolves its config): each
// decode round takes the step count of the running batch's band
// (AdaptiveStepRouter: the batch padded to the next captured CUDA-graph
// size, then the band with the largest lower bound not above it), 0 meaning
// a round without drafting. Within a band the "ema" strategy moves between
// the candidates by an EMA of the accepted drafts (AdaptiveStepSlot in
// python/sglang/srt/speculative/adaptive_spec_params.py at 015c8726); the
// "throughput_aware" strategy takes the candidate with the most tokens per
// unit of step time, which the model computes where SGLang profiles it at
// startup and tracks the acceptance in a window (throughput_aware_controller.py):
// its decision once profiled and warmed up.
type adaptiveSteps struct {
	plan  *cmdline.AdaptivePlan
	slots []*emaSlot
	perf  Perf
	// graphBS are the decode CUDA-graph batch sizes a batch is padded to
	// before its band is chosen; nil without a decode graph.
	graphBS []int
}

// emaSlot is one band's state: the steps it runs, the EMA of accepted
// drafts, and the rounds it has seen.
type emaSlot struct {
	cmdline.AdaptiveSlot
	current int
	ema     float64
	rounds  int
}

func newAdaptiveSteps(perf Perf) *adaptiveSteps {
	a := &adaptiveSteps{plan: perf.plan, perf: perf}
	if perf.graphMaxBS > 0 {
		a.graphBS = specGraphBatchSizes(perf.graphMaxBS)
	}
	for _, s := range perf.plan.Slots {
		cur := perf.steps
		if !slices.Contains(s.Candidates, cur) {
			cur = s.Candidates[len(s.Candidates)/2]
		}
		// The EMA starts at the accepted drafts that would keep the steps.
		a.slots = append(a.slots, &emaSlot{AdaptiveSlot: s, current: cur, ema: float64(cur - 1)})
	}
	return a
}

// slot is the band a batch of this size runs in.
func (a *adaptiveSteps) slot(batch int) *emaSlot {
	if i, _ := slices.BinarySearch(a.graphBS, batch); i < len(a.graphBS) {
		batch = a.graphBS[i]
	}
	k := 0
	for i, s := range a.slots {
		if s.MinBatch <= batch {
			k = i
		}
	}
	return a.slots[k]
}

// steps is the step count of a round over batch running requests.
func (a *adaptiveSteps) steps(batch int) int {
	s := a.slot(batch)
	if a.plan.Strategy != "throughput_aware" {
		return s.current
	}
	best, bestScore := s.Candidates[0], -1.0
	for _, c := range s.Candidates {
		if score := a.perf.meanAcceptAt(c) / float64(a.perf.decodeStepAt(batch, c)); score > bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

// verified feeds a round's accepted drafts per request to its band and
// returns SGLang's log line when the band changes its steps ("" if not).
func (a *adaptiveSteps) verified(batch int, correct []int) string {
	if a.plan.Strategy == "throughput_aware" || len(correct) == 0 {
		return ""
	}
	return a.slot(batch).update(correct)
}

// update is AdaptiveStepSlot.update: the EMA follows the mean accepted
// drafts while drafting, and after the warm-up, every update interval, the
// steps move down past candidates whose threshold the EMA is under, or else
// up past those it is over; a band at 0 steps probes the next candidate.
func (s *emaSlot) update(correct []int) string {
	if s.current > 0 {
		sum := 0
		for _, c := range correct {
			sum += c
		}
		s.ema = (1-s.EMAAlpha)*s.ema + s.EMAAlpha*float64(sum)/float64(len(correct))
	}
	s.rounds++
	if s.rounds <= s.WarmupBatches || (s.rounds-s.WarmupBatches)%s.UpdateInterval != 0 {
		return ""
	}
	old := s.current
	i := slices.Index(s.Candidates, old)
	if old == 0 {
		i = min(i+1, len(s.Candidates)-1)
		if target := s.Candidates[i]; target > 0 && s.ema < 0 {
			s.ema = float64(target - 1)
		}
		return s.apply(old, s.Candidates[i])
	}
	start := i
	for i > 0 {
		prev := s.Candidates[i-1]
		drop := float64(prev) - 0.5
		if prev == 0 {
			drop = 0.5
		}
		if s.ema > drop+s.DownHysteresis {
			break
		}
		i--
	}
	if i == start {
		for i < len(s.Candidates)-1 && s.ema > float64(s.Candidates[i])-0.5+s.UpHysteresis {
			i++
		}
	}
	target := s.Candidates[i]
	if s.CeilingCoeff > 0 {
		// The ceiling only holds the steps down, never blocks a rise.
		ceiling := max(1, int(math.Ceil(s.ema*s.CeilingCoeff)))
		if target > ceiling && target <= old {
			for i > 0 && s.Candidates[i] > ceiling {
				i--
			}
			target = s.Candidates[i]
		}
	}
	return s.apply(old, target)
}

func (s *emaSlot) apply(old, target int) string {
	if target == old {
		return ""
	}
	s.current = target
	return fmt.Sprintf("Adaptive spec params updated: steps %d -> %d (ema_accept_len=%.2f)", old, target, s.ema)
}

// specGraphBatchSizes are the decode CUDA-graph batch sizes SGLang captures
// for a speculative server up to maxBS (generate_decode_cuda_graph_batch_sizes,
// formerly ServerArgs._generate_cuda_graph_batch_sizes): every size to 8,
// then steps of 2 to 32, of 4 to 64, of 8 to 256, of 16 beyond, and maxBS.
func specGraphBatchSizes(maxBS int) []int {
	var bs []int
	add := func(from, to, step int) {
		for b := from; b <= min(to, maxBS); b += step {
			bs = append(bs, b)
		}
	}
	add(1, 8, 1)
	add(10, 32, 2)
	add(40, 64, 4)
	add(72, 256, 8)
	add(272, maxBS, 16)
	if !slices.Contains(bs, maxBS) {
		bs = append(bs, maxBS)
	}
	return bs
}
