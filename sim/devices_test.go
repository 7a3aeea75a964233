package sim

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// TestServerOnVisibleDevices: a tp 2 server under CUDA_VISIBLE_DEVICES=6,7
// runs its ranks, and its activity, on the host's GPUs 6 and 7.
func TestServerOnVisibleDevices(t *testing.T) {
	c, err := cmdline.ParseArgs([]string{"--tp", "2"}, func(k string) string { return map[string]string{gpu.CUDAVisibleDevicesEnv: "6,7"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Sim.GPUs != 2 || c.DeviceOf(0) != 6 || c.DeviceOf(1) != 7 || !reflect.DeepEqual(cmdline.ServerGPUs(c), []int{6, 7}) {
		t.Errorf("tp 2 on 6,7: --sim-gpus %d, ranks on %d and %d, activity on %v", c.Sim.GPUs, c.DeviceOf(0), c.DeviceOf(1), cmdline.ServerGPUs(c))
	}
}

// TestCUDAVisibleDevicesServer: a server launched on GPUs "2,3" holds its
// ranks' memory on the host's GPUs 2 and 3, which the fake nvidia-smi, like
// NVML, lists among all eight; one whose tp does not fit the GPUs it sees
// fails its load with torch's error for the first rank without a device,
// as SGLang does, and exits 1.
func TestCUDAVisibleDevicesServer(t *testing.T) {
	p := startSim(t, map[string]string{gpu.CUDAVisibleDevicesEnv: "2,3"}, "--tp", "2")
	p.waitHealthy()
	waitFor(t, 5*time.Second, func() bool { return len(p.liveChildren()) == 2 })
	used := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(p.smi("--query-gpu=index,memory.used", "--format=csv,noheader,nounits")), "\n") {
		i, m, _ := strings.Cut(line, ", ")
		gi, _ := strconv.Atoi(i)
		used[gi], _ = strconv.Atoi(m)
	}
	if len(used) != 8 {
		t.Fatalf("nvidia-smi lists %d GPUs, want the host's 8", len(used))
	}
	for g, m := range used {
		if busy := g == 2 || g == 3; busy != (m > gpu.IdleGPUMiB) {
			t.Errorf("GPU %d: %d MiB used; want the ranks' memory on GPUs 2 and 3 only (%v)", g, m, used)
		}
	}
	apps := p.smi("--query-compute-apps=process_name,gpu_uuid", "--format=csv,noheader")
	for _, want := range []string{"sglang::scheduler_TP0, " + gpu.GPUUUID(2), "sglang::scheduler_TP1, " + gpu.GPUUUID(3)} {
		if !strings.Contains(apps, want) {
			t.Errorf("compute apps lack %q:\n%s", want, apps)
		}
	}

	q := startSim(t, map[string]string{gpu.CUDAVisibleDevicesEnv: "2,3"}, "--tp", "4")
	if code := q.wait(20 * time.Second); code != 1 {
		t.Errorf("tp 4 on two GPUs: exit %d, want 1", code)
	}
	log := q.log.String()
	for _, want := range []string{" TP2] Scheduler hit an exception: Traceback (most recent call last):",
		"    torch.get_device_module(self.device).set_device(self.gpu_id)\ntorch.AcceleratorError: CUDA error: invalid device ordinal\nGPU device may be out of range, do you have enough GPUs?\n",
		"Received sigquit from a child process. It usually means the child failed."} {
		if !strings.Contains(log, want) {
			t.Errorf("tp 4 on two GPUs: the log lacks %q:\n%s", want, simtest.Tail(log, 30))
		}
	}
}

// TestNoVisibleDevice: a server launched with CUDA_VISIBLE_DEVICES set
// empty, as bakeoff launches a role of gpus: 0, sees no GPU (unset, it
// would see every one): its load fails with torch's error for a process
// that sees none, and it exits 1.
func TestNoVisibleDevice(t *testing.T) {
	p := startSim(t, map[string]string{gpu.CUDAVisibleDevicesEnv: ""}, "--tp", "1")
	if code := p.wait(20 * time.Second); code != 1 {
		t.Errorf("CUDA_VISIBLE_DEVICES empty: exit %d, want 1", code)
	}
	log := p.log.String()
	for _, want := range []string{" TP0] Scheduler hit an exception: Traceback (most recent call last):",
		"    torch.get_device_module(self.device).set_device(self.gpu_id)\nRuntimeError: No CUDA GPUs are available\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, simtest.Tail(log, 30))
		}
	}
}
