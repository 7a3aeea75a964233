package hoststate

import (
	"fmt"
	"strings"
)

// Reasons is a GPU's clock event reasons bitmask (formerly "throttle
// reasons"): nvidia-smi's clocks_event_reasons.active, which
// `nvidia-smi --help-query-gpu` documents as "Bitmask of active clock event
// reasons. See nvml.h for more details."
type Reasons uint64

// The bits of Reasons, as nvml.h defines them (NVML API Reference,
// "NvmlClocksEventReasons", docs.nvidia.com/deploy/nvml-api/
// group__nvmlClocksEventReasons.html; the same values under the older
// nvmlClocksThrottleReason names in R525's reference). Newer drivers may
// set bits defined after these; String shows them in hex.
const (
	ReasonGPUIdle              Reasons = 0x1   // nvmlClocksEventReasonGpuIdle
	ReasonApplicationsClocks   Reasons = 0x2   // nvmlClocksEventReasonApplicationsClocksSetting
	ReasonSWPowerCap           Reasons = 0x4   // nvmlClocksEventReasonSwPowerCap
	ReasonHWSlowdown           Reasons = 0x8   // nvmlClocksThrottleReasonHwSlowdown
	ReasonSyncBoost            Reasons = 0x10  // nvmlClocksEventReasonSyncBoost
	ReasonSWThermalSlowdown    Reasons = 0x20  // nvmlClocksEventReasonSwThermalSlowdown
	ReasonHWThermalSlowdown    Reasons = 0x40  // nvmlClocksThrottleReasonHwThermalSlowdown
	ReasonHWPowerBrakeSlowdown Reasons = 0x80  // nvmlClocksThrottleReasonHwPowerBrakeSlowdown
	ReasonDisplayClocks        Reasons = 0x100 // nvmlClocksEventReasonDisplayClockSetting
)

// Disturbing are the reasons that say the host slowed the GPU, not the
// configuration or a setting: heat (SW and HW thermal slowdown), the power
// supply's brake, and HW slowdown, which stands for either. Idle is the
// GPU waiting for work; the SW power cap is the configuration's own draw
// meeting the power limit (a changed limit is a host fact the diff names);
// applications, display clocks and sync boost are settings.
const Disturbing = ReasonHWSlowdown | ReasonSWThermalSlowdown | ReasonHWThermalSlowdown | ReasonHWPowerBrakeSlowdown

// reasonWords are the reasons' names as nvidia-smi -q prints them under
// "Clocks Event Reasons", in bit order.
var reasonWords = []struct {
	bit   Reasons
	words string
}{
	{ReasonGPUIdle, "idle"},
	{ReasonApplicationsClocks, "applications clocks setting"},
	{ReasonSWPowerCap, "SW power cap"},
	{ReasonHWSlowdown, "HW slowdown"},
	{ReasonSyncBoost, "sync boost"},
	{ReasonSWThermalSlowdown, "SW thermal slowdown"},
	{ReasonHWThermalSlowdown, "HW thermal slowdown"},
	{ReasonHWPowerBrakeSlowdown, "HW power brake slowdown"},
	{ReasonDisplayClocks, "display clock setting"},
}

// Bits are r's reasons one bit each, in bit order.
func (r Reasons) Bits() []Reasons {
	var out []Reasons
	for b := Reasons(1); b != 0 && b <= r; b <<= 1 {
		if r&b != 0 {
			out = append(out, b)
		}
	}
	return out
}

// String names r's reasons in words, in bit order ("SW power cap, HW
// thermal slowdown"); a bit nvml.h did not define when this was written is
// shown in hex. "none" for no reason.
func (r Reasons) String() string {
	if r == 0 {
		return "none"
	}
	var out []string
	for _, b := range r.Bits() {
		out = append(out, b.word())
	}
	return strings.Join(out, ", ")
}

// word names one bit.
func (r Reasons) word() string {
	for _, w := range reasonWords {
		if w.bit == r {
			return w.words
		}
	}
	return fmt.Sprintf("reason %#x", uint64(r))
}
