package orchestrator

import (
	"context"
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/remote"
)

// DefaultGPUPoll is how often the GPU wait reads nvidia-smi.
const DefaultGPUPoll = 500 * time.Millisecond

// waitGPUFree waits until every GPU is under the campaign's threshold with no
// compute process left; on timeout the error names the processes that still
// hold memory (and they are killed first when the campaign allows it).
func waitGPUFree(ctx context.Context, s *scenarioRun) error {
	if s.dep == nil {
		return s.waitGPUFreeOn(ctx, s.w)
	}
	// A deployment's processes hold GPUs on every host of its launch.
	for _, n := range s.w.nodes() {
		if n.unreachable {
			continue
		}
		if err := s.waitGPUFreeOn(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// waitGPUFreeOn is waitGPUFree on one host of the launch.
func (s *scenarioRun) waitGPUFreeOn(ctx context.Context, w *worker) error {
	o := s.o
	// A slot of a shared host waits for its own GPUs; the processes on the
	// others are the other slots' launches, neither waited for nor killed.
	only := s.slotGPUs(w)
	if only != nil && len(only) == 0 {
		return nil // the slot's launch uses no GPU here (every role gpus: 0)
	}
	err := w.overLink(ctx, s.sc.Name, "waiting for free GPU memory", func(ctx context.Context) error {
		return remote.WaitGPUFree(ctx, w.h, remote.GPUWait{
			NvidiaSMI:  o.c.GPU.NvidiaSMI,
			MaxUsedMiB: o.c.GPU.MaxUsedMiB,
			Timeout:    o.c.GPU.WaitTimeout,
			Interval:   min(DefaultGPUPoll, o.c.Engine.PollInterval),
			KillStrays: o.c.GPU.KillStrays && only == nil,
			Indices:    only,
		})
	})
	if err != nil {
		return fmt.Errorf("waiting for free GPU memory on %s before %s: %w", w.h.Name(), s.sc.Name, err)
	}
	return nil
}
