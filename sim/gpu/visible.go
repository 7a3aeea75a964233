package gpu

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

// VisibleDevices is the host's GPUs that CUDA_VISIBLE_DEVICES v lets a
// process see, on a host of hostGPUs: each entry an index or a GPU's UUID,
// read up to the first that names no device of the host (CUDA drops it and
// every entry after it: "0,9,1" on eight GPUs is GPU 0 alone) or repeats
// one. ok is false when v is empty: the variable unset, every GPU visible.
func VisibleDevices(v string, hostGPUs int) (devices []int, ok bool) {
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

// HostGPUs is the fake host's GPU count: BAKEOFF_SIM_GPUS, as the fake
// nvidia-smi reads it, else DefaultGPUs.
func HostGPUs(getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv(SimGPUsEnv)); err == nil && n >= 0 {
		return n
	}
	return DefaultGPUs
}

// uuidIndex is the index of the host's GPU whose UUID is u, -1 when none.
func uuidIndex(u string, hostGPUs int) int {
	for i := range hostGPUs {
		if GPUUUID(i) == u {
			return i
		}
	}
	return -1
}
