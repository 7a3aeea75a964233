package gpu

import (
	"fmt"
	"strconv"
	"strings"
)

// SimGPUThrottleEnv names the environment variable that makes fake GPUs
// throttle while they work: "3:hw_thermal_slowdown" holds GPU 3's clocks
// down by HW thermal slowdown whenever an engine steps on it, and
// "0:sw_power_cap+hw_slowdown,3:sw_thermal_slowdown" names several GPUs and
// reasons. Each reason is a clocks_event_reasons.* field of nvidia-smi
// --help-query-gpu. Only the fake nvidia-smi reports it (the reasons, the
// counters, a lower SM clock, a hot GPU); the engine runs as fast as ever.
// A campaign plants a throttled launch by placing a scenario on the GPU
// (CUDA_VISIBLE_DEVICES): the GPU works, and throttles, only during that
// scenario's launches.
const SimGPUThrottleEnv = "BAKEOFF_SIM_GPU_THROTTLE"

// The clock event reasons' bits, as nvml.h defines them (NVML API
// Reference, "NvmlClocksEventReasons").
const (
	reasonIdle           uint64 = 0x1
	reasonSWPowerCap     uint64 = 0x4
	reasonHWSlowdown     uint64 = 0x8
	reasonSWThermal      uint64 = 0x20
	reasonHWThermal      uint64 = 0x40
	reasonHWPowerBrake   uint64 = 0x80
	reasonsHalvingClocks        = reasonHWSlowdown | reasonHWThermal | reasonHWPowerBrake
	reasonsHot                  = reasonSWThermal | reasonHWThermal
)

// throttleReasons are the reasons SimGPUThrottleEnv may name.
var throttleReasons = map[string]uint64{
	"sw_power_cap":            reasonSWPowerCap,
	"hw_slowdown":             reasonHWSlowdown,
	"sw_thermal_slowdown":     reasonSWThermal,
	"hw_thermal_slowdown":     reasonHWThermal,
	"hw_power_brake_slowdown": reasonHWPowerBrake,
}

// Throttle reads SimGPUThrottleEnv: each named GPU's reasons.
func Throttle(getenv func(string) string) (map[int]uint64, error) {
	v := strings.TrimSpace(getenv(SimGPUThrottleEnv))
	if v == "" {
		return nil, nil
	}
	out := map[int]uint64{}
	for _, item := range strings.Split(v, ",") {
		gpu, reasons, ok := strings.Cut(strings.TrimSpace(item), ":")
		i, err := strconv.Atoi(gpu)
		if !ok || err != nil || i < 0 {
			return nil, fmt.Errorf("bad %s=%q: want GPU:REASON[+REASON], comma-separated", SimGPUThrottleEnv, v)
		}
		for _, r := range strings.Split(reasons, "+") {
			bit, ok := throttleReasons[r]
			if !ok {
				return nil, fmt.Errorf("bad %s=%q: %q is not one of sw_power_cap, hw_slowdown, sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown",
					SimGPUThrottleEnv, v, r)
			}
			out[i] |= bit
		}
	}
	return out, nil
}

// reasons are the GPU's active clock event reasons: idle while no engine
// steps on it, its throttle while one does.
func (g gpuView) reasons() uint64 {
	if g.util <= 0 {
		return reasonIdle
	}
	return g.throttle
}

// counter is the time, µs, reason has held the GPU down: all the time its
// live engines have worked, when it throttles for that reason.
func (g gpuView) counter(reason uint64) string {
	if g.throttle&reason == 0 {
		return "0"
	}
	return strconv.FormatInt(g.busy.Microseconds(), 10)
}
