package hoststate

import (
	"fmt"
	"slices"
	"strings"
)

// The thresholds past which a launch's host was disturbed.
const (
	// DisturbedLoadPerCPU is the 1-minute load average per online CPU
	// past which the CPUs were oversubscribed as the sweep began: twice as
	// many runnable tasks as CPUs, so each waits about half its time. A
	// serving engine's CPU side (its scheduler, tokenizer and HTTP
	// threads) then runs late on every step.
	DisturbedLoadPerCPU = 2.0
	// DisturbedCPUPressure is the share of the last 10 s in which some
	// task waited for a CPU (PSI "some avg10"), percent, which must also
	// be passed where the kernel has PSI: the load average counts tasks
	// waiting on disks too, PSI only those waiting for a CPU.
	DisturbedCPUPressure = 50.0
	// QuietLoadPerCPU is the 1-minute load average per online CPU at or
	// under which the host was quiet as the sweep began: no more runnable
	// tasks than CPUs. A load between the two thresholds is neither, so a
	// load that wavers around one threshold does not make one launch of a
	// round busy and the other quiet.
	QuietLoadPerCPU = 1.0
	// DisturbedThrottleShare is the share of the sweep a GPU may spend
	// in a disturbing clock event reason (Disturbing), by the driver's
	// counters, before the launch is disturbed: a slowdown halves the
	// clocks or more, so 1% of the sweep may already move a figure by
	// half a percent.
	DisturbedThrottleShare = 0.01
)

// Disturbed says, in words, what disturbed the launch's host, or "" when
// nothing did: the CPUs (Busy) and the GPUs (GPUDisturbed).
func (l *Launch) Disturbed() string {
	var out []string
	for _, w := range []string{l.Busy(), l.GPUDisturbed()} {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, "; ")
}

// GPUDisturbed says which of the launch's GPUs a Disturbing reason held
// down, and for how long, or "": for at least DisturbedThrottleShare of
// the sweep by the driver's counters, or at either reading for a reason
// the driver does not count. The GPU's state is the launch's own: another
// launch, even of the same round, may find it cool.
func (l *Launch) GPUDisturbed() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.gpuDisturbances(), "; ")
}

// Busy says how oversubscribed the host's CPUs were as the sweep began,
// or "": a load past DisturbedLoadPerCPU per CPU with (where the kernel
// has PSI) a CPU pressure past DisturbedCPUPressure. Only the reading
// before the sweep is judged: the one after counts the sweep's own load
// generator and the server it kept busy. A host busy for every launch
// alike favours no side of a comparison: the verdict doubts a busy launch
// only against a quiet one of its round (Quiet).
func (l *Launch) Busy() string {
	if l == nil {
		return ""
	}
	return l.Before.busyWords()
}

// Quiet reports whether the host was quiet as the sweep began (a load at
// most QuietLoadPerCPU per CPU), with that load; false when unknown.
func (l *Launch) Quiet() (float64, bool) {
	if l == nil || l.Before == nil || l.Before.CPUs <= 0 {
		return 0, false
	}
	return l.Before.Load1, l.Before.Load1 <= QuietLoadPerCPU*float64(l.Before.CPUs)
}

// busyWords say how loaded the host was, or "" when it was not past the
// thresholds or its CPUs are unknown.
func (s *State) busyWords() string {
	if s == nil || s.CPUs <= 0 || s.Load1 <= DisturbedLoadPerCPU*float64(s.CPUs) {
		return ""
	}
	if s.CPUSome10 == nil {
		return fmt.Sprintf("load %.1f on %d CPUs as the sweep began", s.Load1, s.CPUs)
	}
	if *s.CPUSome10 <= DisturbedCPUPressure {
		return ""
	}
	return fmt.Sprintf("load %.1f on %d CPUs as the sweep began, tasks waiting for a CPU %.0f%% of the time", s.Load1, s.CPUs, *s.CPUSome10)
}

// gpuDisturbances are the launch's GPUs held down by a Disturbing reason,
// one phrase per GPU, in index order.
func (l *Launch) gpuDisturbances() []string {
	var out []string
	for _, i := range l.gpuIndices() {
		before, after := l.Before.gpu(i), l.After.gpu(i)
		var parts []string
		counted := Reasons(0)
		if dt := l.sweepSeconds(); dt > 0 && before != nil && after != nil && before.Counters != nil && after.Counters != nil {
			b, a := before.Counters.byReason(), after.Counters.byReason()
			for k := range b {
				counted |= b[k].bit
				share := float64(a[k].us-b[k].us) / 1e6 / dt
				if b[k].bit&Disturbing != 0 && share >= DisturbedThrottleShare {
					parts = append(parts, fmt.Sprintf("%s for %.0f%% of the sweep", b[k].bit.word(), 100*share))
				}
			}
		}
		began, ended := activeReasons(before)&Disturbing&^counted, activeReasons(after)&Disturbing&^counted
		for _, b := range (began | ended).Bits() {
			when := "as the sweep began"
			switch {
			case began&ended&b != 0:
				when = "as the sweep began and as it ended"
			case ended&b != 0:
				when = "as the sweep ended"
			}
			parts = append(parts, b.word()+" "+when)
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("GPU %d in %s", i, strings.Join(parts, ", ")))
		}
	}
	return out
}

// sweepSeconds is the time between the launch's readings by the host's
// clock; 0 when either lacks it.
func (l *Launch) sweepSeconds() float64 {
	if l.Before == nil || l.After == nil || l.Before.UptimeS <= 0 || l.After.UptimeS <= l.Before.UptimeS {
		return 0
	}
	return l.After.UptimeS - l.Before.UptimeS
}

// gpuIndices are the indices of the GPUs either reading has, in order.
func (l *Launch) gpuIndices() []int {
	var out []int
	for _, s := range []*State{l.Before, l.After} {
		if s == nil {
			continue
		}
		for _, g := range s.GPUs {
			if !slices.Contains(out, g.Index) {
				out = append(out, g.Index)
			}
		}
	}
	slices.Sort(out)
	return out
}

// gpu is the GPU of index i at the reading, or nil.
func (s *State) gpu(i int) *GPU {
	if s == nil {
		return nil
	}
	for k := range s.GPUs {
		if s.GPUs[k].Index == i {
			return &s.GPUs[k]
		}
	}
	return nil
}

// activeReasons are g's active reasons; none when g or its reasons are
// unknown.
func activeReasons(g *GPU) Reasons {
	if g == nil || g.Reasons == nil {
		return 0
	}
	return *g.Reasons
}
