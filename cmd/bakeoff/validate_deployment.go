package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// printDeployment writes a deployment scenario's processes host by host:
// which role the load talks to, the order the roles start in, then each
// node's instances with their port, GPUs and exact launch command. A launch
// that spans several nodes learns their addresses when it starts, so they
// show as NODE0, NODE1, ….
func printDeployment(w io.Writer, c *campaign.Campaign, sc *campaign.Scenario, bakeoff string) error {
	dep := sc.Deployment
	nodes := dep.NodeCount()
	insts := dep.Instances(c.Engine.Port, campaign.Slot{})
	addr := campaign.Addresses(campaign.LocalAddresses)
	if nodes > 1 {
		addr = func(k int) string { return fmt.Sprintf("NODE%d", k) }
	}
	var waves []string
	for _, wave := range sc.StartOrder() {
		var names []string
		for _, r := range wave {
			names = append(names, r.Name)
		}
		waves = append(waves, strings.Join(names, ", "))
	}
	fmt.Fprintf(w, "          deployment of %s on %s, %s; the load talks to %s\n",
		processes(len(insts)), plural(nodes, "node"), plural(sc.GPUs(), "GPU"), dep.Serve)
	if len(waves) > 1 {
		fmt.Fprintf(w, "          starts %s, each once the one before is ready\n", strings.Join(waves, "; then "))
	}
	for node := range nodes {
		fmt.Fprintf(w, "          node %d:\n", node)
		for i, in := range insts {
			if in.Node != node {
				continue
			}
			l, err := campaign.RenderInstance(c, sc, insts, i, campaign.Slot{}, campaign.On{Bakeoff: bakeoff, Workdir: c.Host.Workdir}, addr)
			if err != nil {
				return err
			}
			gpus := ""
			switch {
			case in.GPUs == nil: // sees every GPU of its host
			case len(in.GPUs) == 0:
				gpus = ", no GPU (gpus: 0)"
			case len(in.GPUs) == 1:
				gpus = fmt.Sprintf(", GPU %d", in.GPUs[0])
			default:
				gpus = fmt.Sprintf(", GPUs %s", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(in.GPUs)), ","), "[]"))
			}
			health := ""
			if in.Role.Health == campaign.HealthNone {
				health = ", ready while it runs (health: none)"
			}
			fmt.Fprintf(w, "            %s: port %d%s%s\n", in.Name(), in.Port, gpus, health)
			fmt.Fprintf(w, "              %s\n", l.Command)
			for _, d := range l.Dirs {
				fmt.Fprintf(w, "              creates %s before the launch\n", d)
			}
		}
	}
	return nil
}

// processes is "1 process" or "N processes".
func processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", n)
}

// printSlots writes how launches share each host (launches_per_host): each
// slot's GPUs and where its ports start.
func printSlots(w io.Writer, c *campaign.Campaign) {
	k := c.LaunchesPerHost
	if k <= 1 {
		return
	}
	g := c.SlotGPUs()
	var slots []string
	for i := range k {
		sl := c.SlotOf(i)
		var gpus string
		switch g {
		case 0: // every role of every launch has gpus: 0
			gpus = "no GPU"
		case 1:
			gpus = fmt.Sprintf("GPU %d", sl.GPUOffset)
		default:
			gpus = fmt.Sprintf("GPUs %d-%d", sl.GPUOffset, sl.GPUOffset+g-1)
		}
		slots = append(slots, fmt.Sprintf("%d: %s, ports from %d", i+1, gpus, c.Engine.Port+sl.PortOffset))
	}
	fmt.Fprintf(w, "slots     %d launches side by side on each host, each round whole in one slot (no power sampler):\n", k)
	for _, s := range slots {
		fmt.Fprintf(w, "          %s\n", s)
	}
}
