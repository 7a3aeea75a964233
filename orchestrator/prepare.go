package orchestrator

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// prepare reads the host's facts (with its RDMA devices when a scenario is
// disaggregated, rdma.go) and decides where the sweep runs: on the
// host when it can run this very binary (uploaded to the workdir unless the
// host is this machine), else through the tunnel. A single host's facts go
// into the manifest here; a fleet's once every host is prepared.
func (w *worker) prepare(ctx context.Context) error {
	o := w.o
	wantHost := o.c.Host.SweepMode != campaign.SweepOverSSH
	if o.c.Host.Local {
		w.hostBakeoff, w.sweepOnHost = o.opt.Bakeoff, wantHost
	}
	if err := remote.EnsureDir(ctx, w.h, w.paths.workdir); err != nil {
		return fmt.Errorf("creating the workdir %s on %s: %w", w.paths.workdir, w.h.Name(), err)
	}
	w.facts = results.HostFacts{Name: w.h.Name(), NoGPU: o.c.GPU.None}
	goos, goarch, err := remote.Platform(ctx, w.h)
	if err != nil {
		return fmt.Errorf("reading the platform of %s: %w", w.h.Name(), err)
	}
	w.hostFacts(ctx, goos, goarch)
	w.rdmaFacts(ctx)
	if o.c.NodesPerLaunch() > 1 {
		// The hosts of a launch over several nodes name each other by it.
		if err := w.readAddress(ctx); err != nil {
			return err
		}
	}

	if !o.c.Host.Local {
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			if err := remote.EnsureDir(ctx, w.h, pathDir(w.paths.bin)); err != nil {
				return err
			}
			if err := w.h.Upload(ctx, o.opt.Bakeoff, w.paths.bin); err != nil {
				return fmt.Errorf("uploading bakeoff to %s: %w", w.h.Name(), err)
			}
			w.hostBakeoff, w.sweepOnHost = w.paths.bin, wantHost
		} else {
			w.sweepOnHost = false
			if wantHost {
				w.warn("", fmt.Sprintf("%s is %s/%s and this bakeoff is %s/%s: the sweep runs here, through the SSH tunnel",
					w.h.Name(), goos, goarch, runtime.GOOS, runtime.GOARCH))
			}
		}
	}
	if o.fleet {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.man.Host = w.facts
	return o.writeManifest()
}

// hostFacts records the host's name, kernel, CPU governor, driver and
// GPUs; a fact that cannot be read is a warning, not a failure. A host
// without a GPU (gpu: none) is not asked for GPU facts: NoGPU says why
// there are none.
func (w *worker) hostFacts(ctx context.Context, goos, goarch string) {
	o := w.o
	w.facts.OS, w.facts.Arch = goos, goarch
	if out, _, err := w.h.Run(ctx, hoststate.FactsCommand); err == nil {
		if f, err := hoststate.ParseFacts(string(out)); err == nil {
			w.facts.Name = f.Node + " (" + w.h.Name() + ")"
			w.facts.Kernel, w.facts.Governor = f.Kernel, f.Governor
		}
	}
	if o.c.GPU.None {
		return
	}
	driver, gpus, err := remote.GPUFacts(ctx, w.h, o.c.GPU.NvidiaSMI)
	if err != nil {
		w.warn("", fmt.Sprintf("reading GPU facts on %s: %v", w.h.Name(), err))
	}
	w.facts.Driver, w.facts.GPUs = driver, gpus
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "."
}
