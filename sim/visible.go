package sim

import (
	"strconv"
	"strings"
)

// CUDA_VISIBLE_DEVICES, as CUDA reads it: the process sees the devices the
// variable lists, in its order, as devices 0, 1, …; its ranks' gpu_id (0 to
// tp/nnodes − 1, SGLang's base_gpu_id 0) index that list, so that a server
// launched on "2,3" runs on the host's GPUs 2 and 3, and one whose tp does
// not fit the list fails to set its device, as torch does. nvidia-smi reads
// NVML, which ignores the variable: the fake one lists every GPU of the
// host, with each rank's memory on the GPU it really runs on.

// CUDAVisibleDevicesEnv names the variable.
const CUDAVisibleDevicesEnv = "CUDA_VISIBLE_DEVICES"

// visibleDevices is the host's GPUs that CUDA_VISIBLE_DEVICES v lets a
// process see, on a host of hostGPUs: each entry an index or a GPU's UUID,
// read up to the first that names no device of the host (CUDA drops it and
// every entry after it: "0,9,1" on eight GPUs is GPU 0 alone) or repeats
// one. ok is false when v is empty: the variable unset, every GPU visible.
func visibleDevices(v string, hostGPUs int) (devices []int, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, false
	}
	devices = []int{}
	seen := map[int]bool{}
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		g, err := strconv.Atoi(e)
		if err != nil {
			g = uuidIndex(e, hostGPUs)
		}
		if g < 0 || g >= hostGPUs || seen[g] {
			break
		}
		seen[g] = true
		devices = append(devices, g)
	}
	return devices, true
}

// SeeNoDevice is the server under CUDA_VISIBLE_DEVICES set to the empty
// string, as bakeoff launches a role of gpus: 0: CUDA then sees no device,
// where the variable unset is every device. ParseArgs's getenv cannot tell
// the two apart, so its caller, which can, says so; the ranks then fail as
// under torch ("No CUDA GPUs are available", load.go).
func (c *Config) SeeNoDevice() { c.Sim.Visible, c.Sim.GPUs = []int{}, 0 }

// uuidIndex is the index of the host's GPU whose UUID is u, -1 when none.
func uuidIndex(u string, hostGPUs int) int {
	for i := range hostGPUs {
		if gpuUUID(i) == u {
			return i
		}
	}
	return -1
}

// hostGPUs is the fake host's GPU count: BAKEOFF_SIM_GPUS, as the fake
// nvidia-smi reads it, else DefaultGPUs.
func hostGPUs(getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv(SimGPUsEnv)); err == nil && n >= 0 {
		return n
	}
	return DefaultGPUs
}

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
