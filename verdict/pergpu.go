package verdict

import (
	"fmt"
	"math"
	"strings"
)

// Per GPU (docs/METHOD.md, "Per GPU"). An aggregated TP8 server against
// two TP4 replicas, or against 2 prefill and 6 decode GPUs, is only a fair
// race per GPU: the one that holds more GPUs would win on throughput alone.
// When the scenarios of a run hold different numbers of GPUs, every launch's
// throughput is divided by its scenario's GPUs before the comparisons. The
// statistics are on log ratios, so this shifts each ratio by the log of the
// two counts' ratio and changes no variance: the intervals, the tests and
// the correction stay what they are, about another quantity. With equal
// counts nothing changes, and nothing is said.

// setGPUs takes each scenario's GPU count from the manifest (counts, by
// name), sets each level's throughput per GPU, and decides whether the
// run's comparisons are per GPU.
func setGPUs(v *Verdict, counts map[string]int) {
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		if s.GPUs = counts[s.Name]; s.GPUs <= 0 {
			s.GPUs = 0
			continue
		}
		for j := range s.Levels {
			l := &s.Levels[j]
			if l.Throughput.N > 0 {
				e := l.Throughput.Over(float64(s.GPUs))
				l.ThroughputPerGPU = &e
			}
		}
	}
	v.PerGPU = differentGPUs(v)
}

// differentGPUs reports whether the measured scenarios hold different
// numbers of GPUs, every count known: with one unknown, a per-GPU figure
// would compare a count with a guess.
func differentGPUs(v *Verdict) bool {
	first, differ := 0, false
	for _, s := range v.Scenarios {
		if s.Failed() || len(s.Levels) == 0 {
			continue
		}
		if s.GPUs == 0 {
			return false
		}
		if first == 0 {
			first = s.GPUs
		}
		differ = differ || s.GPUs != first
	}
	return differ
}

// Over is e divided by n: the center and the bounds, the same confidence.
func (e Estimate) Over(n float64) Estimate {
	e.Center, e.Lo, e.Hi = e.Center/n, e.Lo/n, e.Hi/n
	return e
}

// perGPULevels is ls, levels of s, as the comparisons take them: divided by
// s's GPUs when the run is compared per GPU, else ls itself. Each launch's
// throughput and within-launch samples are divided, on copies, so that the
// scenario's own figures stay whole.
func (v *Verdict) perGPULevels(s *Scenario, ls []Level) []Level {
	if !v.PerGPU || s.GPUs <= 0 {
		return ls
	}
	return LevelsOver(ls, float64(s.GPUs))
}

// LevelsOver is copies of ls with every throughput divided by g: each
// launch's, its within-launch samples and the pooled estimate.
func LevelsOver(ls []Level, g float64) []Level {
	out := make([]Level, len(ls))
	for i, l := range ls {
		l.Launches = scaledLaunches(l.Launches, g)
		l.Samples = scaledSamples(l.Samples, g)
		l.Throughput = l.Throughput.Over(g)
		out[i] = l
	}
	return out
}

func scaledLaunches(ls []LaunchLevel, g float64) []LaunchLevel {
	out := make([]LaunchLevel, len(ls))
	for i, l := range ls {
		l.Throughput /= g
		l.Samples = scaledSamples(l.Samples, g)
		out[i] = l
	}
	return out
}

func scaledSamples(xs []float64, g float64) []float64 {
	if xs == nil {
		return nil
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x / g
	}
	return out
}

// GPUShift is the log of variant's GPUs over base's when the run is
// compared per GPU, else 0: what a per-round log throughput ratio of the
// two loses to become a ratio per GPU.
func (v *Verdict) GPUShift(base, variant *Scenario) float64 {
	if !v.PerGPU || base == nil || variant == nil || base.GPUs <= 0 || variant.GPUs <= 0 {
		return 0
	}
	return math.Log(float64(variant.GPUs) / float64(base.GPUs))
}

// rankOf is what a row ranks a cell by to find its leader: the throughput
// per GPU when the comparisons are per GPU, else the throughput.
func (c Cell) rankOf() float64 {
	if c.PerGPU && c.ThroughputPerGPU != nil {
		return c.ThroughputPerGPU.Center
	}
	return c.Throughput.Center
}

// PerGPULine is the line above the verdict table when the comparisons are
// per GPU, naming each measured scenario's GPUs in campaign order: "per
// GPU: baseline 8 GPUs, disagg 8 GPUs, tp4x2 8 GPUs"; empty when they are
// not.
func (v *Verdict) PerGPULine() string {
	if !v.PerGPU {
		return ""
	}
	var parts []string
	for _, s := range v.Scenarios {
		if s.Failed() || s.GPUs <= 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", s.Name, GPUsText(s.GPUs)))
	}
	return "per GPU: " + strings.Join(parts, ", ") + "; each change and winner is of throughput per GPU"
}

// GPUsText is "1 GPU" or "8 GPUs".
func GPUsText(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}
