package campaign

import "slices"

// Launches side by side on one host (launches_per_host: K): a host of eight
// GPUs runs a TP 2 comparison four launches at a time, each launch in a
// slot of its own: its processes get the GPUs of its slot (the deployment's
// gpus: shifted by the slot's GPU offset) and ports shifted by the slot's
// port offset, so no two slots share a GPU or a port. Every scenario must
// then say which GPUs each of its processes uses: a deployment whose roles
// all have gpus: (a single server is a deployment of one role).

const (
	// MaxLaunchesPerHost bounds launches_per_host.
	MaxLaunchesPerHost = 64
	// SlotPortStride is how far apart the ports of two slots are: slot k's
	// ports are its launch's own plus k × SlotPortStride. A launch's
	// instances must fit within it.
	SlotPortStride = 100
)

// SlotGPUs is how many GPUs one slot takes: the most GPU indices any of
// the campaign's launches uses (its highest index + 1).
func (c *Campaign) SlotGPUs() int {
	n := 0
	for _, s := range c.Scenarios {
		if s.Deployment == nil {
			continue
		}
		for _, in := range s.Deployment.Instances(c.Engine.Port, Slot{}) {
			for _, g := range in.GPUs {
				n = max(n, g+1)
			}
		}
	}
	return n
}

// SlotOf is slot k (0-based) of a host.
func (c *Campaign) SlotOf(k int) Slot {
	return Slot{PortOffset: k * SlotPortStride, GPUOffset: k * c.SlotGPUs()}
}

// checkSlots refuses launches side by side that could meet on a GPU or a
// port: a scenario that does not say which GPUs each of its processes
// uses, a launch over several nodes, a launch whose ports do not fit a
// slot.
func (l *loader) checkSlots(c *Campaign, d *doc, nodes campaignNodes) {
	if c.LaunchesPerHost <= 1 {
		return
	}
	at := d.pos(nodes.launchesPerHost)
	for _, s := range c.Scenarios {
		if s.Deployment == nil {
			l.p.errorf(at, "launches_per_host: %d launches share each host, so each must say which GPUs it uses, and scenario %s is one server without them: write it as a deployment of one role with gpus: (deployment: {roles: {server: {gpus: N}}})",
				c.LaunchesPerHost, s.Name)
			continue
		}
		if n := s.Deployment.NodeCount(); n > 1 {
			l.p.errorf(at, "launches_per_host: scenario %s spans %d nodes; launches side by side share one host each", s.Name, n)
			continue
		}
		for _, r := range s.Deployment.Roles {
			if !r.GPUs.Set() {
				l.p.errorf(r.src.at, "deployment.roles.%s: launches_per_host is %d (%s), so each role says which GPUs it uses: give it gpus:",
					r.Name, c.LaunchesPerHost, at)
			}
		}
		var ports []int
		for _, in := range s.Deployment.Instances(c.Engine.Port, Slot{}) {
			ports = append(ports, in.Port)
		}
		if len(ports) > 0 && slices.Max(ports)-slices.Min(ports) >= SlotPortStride {
			l.p.errorf(s.Deployment.src.at, "scenario %s: its ports %d to %d span more than a slot's %d (launches_per_host: %d)",
				s.Name, slices.Min(ports), slices.Max(ports), SlotPortStride, c.LaunchesPerHost)
		}
	}
}
