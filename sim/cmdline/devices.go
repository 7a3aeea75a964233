package cmdline

// Where a server's ranks run on the fake host (package gpu has the host).

// SeeNoDevice is the server under CUDA_VISIBLE_DEVICES set to the empty
// string, as bakeoff launches a role of gpus: 0: CUDA then sees no device,
// where the variable unset is every device. ParseArgs's getenv cannot tell
// the two apart, so its caller, which can, says so; the ranks then fail as
// under torch ("No CUDA GPUs are available", load.go).
func (c *Config) SeeNoDevice() { c.Sim.Visible, c.Sim.GPUs = []int{}, 0 }

// DeviceOf is the host GPU that TP rank runs on: its device ordinal on this
// node (rank modulo --sim-gpus) through CUDA_VISIBLE_DEVICES when set.
func (c *Config) DeviceOf(rank int) int {
	ord := rank % max(1, c.Sim.GPUs)
	if c.Sim.Visible != nil && ord < len(c.Sim.Visible) {
		return c.Sim.Visible[ord]
	}
	return ord
}

// HasDevice reports whether TP rank, one of this node's, has a device its
// process sees: its gpu_id (its place among the node's ranks) is below
// --sim-gpus, which CUDA_VISIBLE_DEVICES bounds.
func (c *Config) HasDevice(rank int) bool {
	return rank-c.Deploy.NodeRank*c.NodeTP() < c.Sim.GPUs
}

// ServerGPUs are the GPUs a server's ranks run on, as RunChild places them.
func ServerGPUs(c *Config) []int {
	seen := map[int]bool{}
	var out []int
	for r := range max(1, c.TP) {
		if g := c.DeviceOf(r); !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}
