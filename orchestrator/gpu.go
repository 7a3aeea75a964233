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
	o := s.o
	err := s.w.overLink(ctx, s.sc.Name, "waiting for free GPU memory", func(ctx context.Context) error {
		return remote.WaitGPUFree(ctx, s.w.h, remote.GPUWait{
			NvidiaSMI:  o.c.GPU.NvidiaSMI,
			MaxUsedMiB: o.c.GPU.MaxUsedMiB,
			Timeout:    o.c.GPU.WaitTimeout,
			Interval:   min(DefaultGPUPoll, o.c.Engine.PollInterval),
			KillStrays: o.c.GPU.KillStrays,
		})
	})
	if err != nil {
		return fmt.Errorf("waiting for free GPU memory on %s before %s: %w", s.w.h.Name(), s.sc.Name, err)
	}
	return nil
}
