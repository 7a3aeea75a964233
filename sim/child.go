package sim

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
)

const (
	// childTick is how often (wall time) a scheduler child checks its parent
	// and updates its memory.
	childTick = 50 * time.Millisecond
	// orphanMaxLife bounds (wall time) how long an orphaned child lives, so
	// that a forgotten fault cannot leak processes forever.
	orphanMaxLife = 10 * time.Minute
)

// RunChild is a scheduler child process (--sim-child-rank): it registers the
// rank's GPU memory, grows it as the load proceeds, and exits when its
// parent is gone. While the parent lives it ignores SIGTERM (ctx), as the
// parent decides when the server stops; an orphan exits on SIGTERM.
func RunChild(ctx context.Context, cfg *cmdline.Config, pid int, now func() time.Time) error {
	if now == nil {
		now = time.Now
	}
	rank := cfg.Sim.ChildRank
	h := gpu.Holder{PID: pid, GPU: cfg.DeviceOf(rank), Name: fmt.Sprintf("sglang::scheduler_TP%d", rank),
		HoldFor: cfg.Sim.Faults.HoldMemory}
	orphan := cfg.Sim.Faults.OrphanChildren
	start := now()
	if cfg.Sim.ParentStart > 0 {
		start = time.Unix(0, cfg.Sim.ParentStart)
	}
	maxFrac := 1.0
	if cfg.Sim.Faults.HangDuringLoad {
		maxFrac = gpu.FracGraphBegin
	}
	update := func() error {
		if !cfg.HasDevice(rank) {
			return nil // its set_device failed: it holds nothing (load.go)
		}
		frac := float64(now().Sub(start)) * cfg.Sim.Speed / float64(max(1, cfg.Sim.LoadTime))
		mib := rankMemoryMiB(cfg, min(frac, maxFrac))
		if mib == h.MiB {
			return nil
		}
		h.MiB = mib
		return gpu.WriteHolder(cfg.Sim.StateDir, h)
	}
	exit := func() error {
		if h.HoldFor > 0 {
			h.HeldUntil = now().Add(h.HoldFor).UnixNano()
			return gpu.WriteHolder(cfg.Sim.StateDir, h)
		}
		return gpu.RemoveHolder(cfg.Sim.StateDir, h.PID)
	}
	if err := update(); err != nil {
		return err
	}
	tick := time.NewTicker(childTick)
	defer tick.Stop()
	done := ctx.Done()
	for {
		if !orphan && os.Getppid() != cfg.Sim.ParentPID {
			return exit()
		}
		if orphan && now().Sub(start) > orphanMaxLife {
			return exit()
		}
		select {
		case <-done:
			if orphan {
				return exit()
			}
			done = nil // keep running until the parent goes
			continue
		case <-tick.C:
		}
		if err := update(); err != nil {
			return err
		}
	}
}
