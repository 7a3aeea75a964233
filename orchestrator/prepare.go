package orchestrator

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// prepare reads the host's facts into the manifest and decides where the
// sweep runs: on the host when it can run this very binary (uploaded to the
// workdir unless the host is this machine), else through the tunnel.
func (o *orch) prepare(ctx context.Context) error {
	wantHost := o.c.Host.SweepMode != campaign.SweepOverSSH
	if o.c.Host.Local {
		o.hostBakeoff, o.sweepOnHost = o.opt.Bakeoff, wantHost
	}
	if err := remote.EnsureDir(ctx, o.h, o.paths.workdir); err != nil {
		return fmt.Errorf("creating the workdir %s on %s: %w", o.paths.workdir, o.h.Name(), err)
	}
	// A dry run contacts nothing: it shows the run a host of this
	// machine's platform would get.
	goos, goarch := runtime.GOOS, runtime.GOARCH
	if !o.opt.DryRun {
		var err error
		goos, goarch, err = remote.Platform(ctx, o.h)
		if err != nil {
			return fmt.Errorf("reading the platform of %s: %w", o.h.Name(), err)
		}
		o.hostFacts(ctx, goos, goarch)
	}

	if !o.c.Host.Local {
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			if err := remote.EnsureDir(ctx, o.h, pathDir(o.paths.bin)); err != nil {
				return err
			}
			if err := o.h.Upload(ctx, o.opt.Bakeoff, o.paths.bin); err != nil {
				return fmt.Errorf("uploading bakeoff to %s: %w", o.h.Name(), err)
			}
			o.hostBakeoff, o.sweepOnHost = o.paths.bin, wantHost
		} else {
			o.sweepOnHost = false
			if wantHost {
				o.warn("", fmt.Sprintf("%s is %s/%s and this bakeoff is %s/%s: the sweep runs here, through the SSH tunnel",
					o.h.Name(), goos, goarch, runtime.GOOS, runtime.GOARCH))
			}
		}
	}
	return o.writeManifest()
}

// hostFacts records the host's name, kernel, driver and GPUs in the
// manifest; a fact that cannot be read is a warning, not a failure.
func (o *orch) hostFacts(ctx context.Context, goos, goarch string) {
	o.man.Host.OS, o.man.Host.Arch = goos, goarch
	if out, _, err := o.h.Run(ctx, "uname -n; uname -r"); err == nil {
		f := strings.Fields(string(out))
		if len(f) == 2 {
			o.man.Host.Name = f[0] + " (" + o.h.Name() + ")"
			o.man.Host.Kernel = f[1]
		}
	}
	driver, gpus, err := remote.GPUFacts(ctx, o.h, o.c.GPU.NvidiaSMI)
	if err != nil {
		o.warn("", fmt.Sprintf("reading GPU facts on %s: %v", o.h.Name(), err))
	}
	o.man.Host.Driver, o.man.Host.GPUs = driver, gpus
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "."
}
