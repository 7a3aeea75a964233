package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/placement"
)

// dryRunDir stands, in what --dry-run prints, for the scratch directory the
// dry run writes its throwaway results into.
const dryRunDir = "(dry run)"

// runDry runs the campaign on hosts that record what they are asked to do
// (placement.Dry) and prints it; its results go to a scratch directory that
// is removed at the end.
func runDry(ctx context.Context, e *env, c *campaign.Campaign, opt orchestrator.Options) int {
	if err := dryRun(ctx, e.Stdout, c, opt); err != nil {
		fmt.Fprintln(e.Stderr, "bakeoff run:", err)
		return exitFailed
	}
	return exitOK
}

// dryRun prints the dry run of the campaign to w. opt's host and results
// options are replaced.
func dryRun(ctx context.Context, w io.Writer, c *campaign.Campaign, opt orchestrator.Options) error {
	scratch, err := os.MkdirTemp("", "bakeoff-dry-")
	if err != nil {
		return fmt.Errorf("creating the dry run's scratch directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	place := &placement.Dry{Campaign: c}
	p := newDryPrinter(w, c, place.Plan().Where, scratch)
	place.Record = p.record
	hosts, err := place.Acquire(ctx)
	if err != nil {
		return err
	}
	opt.OutDir, opt.ResumeDir, opt.Events = scratch, "", p.event
	setHosts(&opt, place, hosts)
	_, err = orchestrator.Run(ctx, opt)
	place.Release(ctx)
	return err
}

// dryPrinter prints what --dry-run records: per scenario and phase, every
// command the run would execute on the host, exactly as it would send it,
// and the HTTP requests it would make. A line another host records (a Slurm
// login node) names that host.
type dryPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	scratch string
}

// newDryPrinter prints the dry run's header: the campaign, where it runs
// (the provider's words) and its workdir.
func newDryPrinter(w io.Writer, c *campaign.Campaign, where, scratch string) *dryPrinter {
	fmt.Fprintf(w, "# dry run of campaign %s on %s (workdir %s): nothing is executed\n", c.Name, where, c.Host.Workdir)
	if c.GPU.None {
		// Said once here, since the GPU phases it leaves out show nowhere below.
		fmt.Fprintln(w, "# the host has no GPU (gpu: none): no wait for free GPU memory, no GPU facts, no power sampler")
	}
	return &dryPrinter{w: w, scratch: scratch}
}

// record prints one thing a host was asked to do; a host other than the
// one shown gets a heading and its name in the prompt.
func (d *dryPrinter) record(l placement.DryLine) {
	d.mu.Lock()
	defer d.mu.Unlock()
	prompt := "$ "
	if l.On != "" {
		prompt = l.Host + "$ "
		fmt.Fprintf(d.w, "\n### on %s\n", l.On)
	}
	lines := strings.Split(strings.ReplaceAll(l.Line, d.scratch, dryRunDir), "\n")
	fmt.Fprintln(d.w, prompt+lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintln(d.w, "  "+l)
	}
}

func (d *dryPrinter) event(ev orchestrator.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch ev.Kind {
	case orchestrator.EventScenarioStart:
		fmt.Fprintf(d.w, "\n## [%d/%d] scenario %s%s\n", ev.Index, ev.Total, ev.Scenario, roundSuffix(ev))
	case orchestrator.EventPhaseStart:
		fmt.Fprintf(d.w, "\n### %s\n", ev.Phase)
	case orchestrator.EventWarning:
		fmt.Fprintln(d.w, "# warning: "+strings.ReplaceAll(ev.Message, d.scratch, dryRunDir))
	case orchestrator.EventPhaseEnd:
		if ev.Err != nil {
			fmt.Fprintf(d.w, "# %s would fail: %v\n", ev.Phase, ev.Err)
		}
	}
}
