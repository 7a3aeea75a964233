package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
)

// dryPrinter prints what --dry-run records: per scenario and phase, every
// command the run would execute on the host, exactly as it would send it.
type dryPrinter struct {
	w io.Writer
	c *campaign.Campaign
}

func newDryPrinter(w io.Writer, c *campaign.Campaign) *dryPrinter {
	host := "local"
	switch {
	case c.Host.Slurm != nil:
		host = "the nodes of a Slurm allocation through " + c.Host.Slurm.Login
	case !c.Host.Local:
		host = "ssh " + c.Host.SSH
	}
	fmt.Fprintf(w, "# dry run of campaign %s on %s (workdir %s): nothing is executed\n", c.Name, host, c.Host.Workdir)
	if c.GPU.None {
		// Said once here, since the GPU phases it leaves out show nowhere below.
		fmt.Fprintln(w, "# the host has no GPU (gpu: none): no wait for free GPU memory, no GPU facts, no power sampler")
	}
	return &dryPrinter{w: w, c: c}
}

func (d *dryPrinter) event(ev orchestrator.Event) {
	switch ev.Kind {
	case orchestrator.EventScenarioStart:
		fmt.Fprintf(d.w, "\n## [%d/%d] scenario %s%s\n", ev.Index, ev.Total, ev.Scenario, roundSuffix(ev))
	case orchestrator.EventPhaseStart:
		fmt.Fprintf(d.w, "\n### %s\n", ev.Phase)
	case orchestrator.EventDryCommand:
		lines := strings.Split(ev.Message, "\n")
		fmt.Fprintln(d.w, "$ "+lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintln(d.w, "  "+l)
		}
	case orchestrator.EventWarning:
		fmt.Fprintln(d.w, "# warning: "+ev.Message)
	case orchestrator.EventPhaseEnd:
		if ev.Err != nil {
			fmt.Fprintf(d.w, "# %s would fail: %v\n", ev.Phase, ev.Err)
		}
	}
}
