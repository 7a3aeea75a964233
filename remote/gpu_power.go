package remote

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// Power sampler sources.
const (
	PowerNvidiaSMI = "nvidia-smi"
	PowerDCGM      = "dcgm"
)

// DefaultDCGMI is the DCGM command-line client.
const DefaultDCGMI = "dcgmi"

// powerQueryFields are the fields the nvidia-smi sampler asks for, in the
// order ParsePowerSMI reads them. timestamp is nvidia-smi's own clock
// reading of each query ("2026/12/01 03:00:00.123", host local time, so
// the sampler runs with TZ=UTC); one timestamp per loop covers every GPU.
const powerQueryFields = "timestamp,index,power.draw,utilization.gpu,memory.used,clocks.sm"

// dcgmFields are the DCGM field ids the dcgm sampler streams, in the order
// ParsePowerDCGM reads them: 155 DCGM_FI_DEV_POWER_USAGE (W), 203
// DCGM_FI_DEV_GPU_UTIL (%), 252 DCGM_FI_DEV_FB_USED (MiB), 100
// DCGM_FI_DEV_SM_CLOCK (MHz), as DCGM's field identifier reference
// (docs.nvidia.com/datacenter/dcgm, "Field Identifiers") numbers them.
const dcgmFields = "155,203,252,100"

// PowerSamplerCommand is the shell command that samples GPU power every
// interval until it is stopped, one line per GPU per reading, for source
// PowerNvidiaSMI (nvidiaSMI as in QueryGPUs) or PowerDCGM.
//
// nvidia-smi loops itself (-lms: "probe until Ctrl+C at the specified
// millisecond interval", nvidia-smi(1)), one process for the whole sweep
// rather than one per reading. dcgmi dmon prints no time, so each of its
// lines is stamped with bash's $EPOCHREALTIME as it arrives. Both run under
// stdbuf -oL where the host has it: their output goes to a file, and a
// block-buffered tail would be lost when the sampler is stopped.
func PowerSamplerCommand(source, nvidiaSMI string, interval time.Duration) string {
	ms := max(1, int(interval/time.Millisecond))
	lineBuf := "if command -v stdbuf >/dev/null 2>&1; then lb='stdbuf -oL'; else lb=; fi; "
	if source == PowerDCGM {
		return lineBuf + fmt.Sprintf(`$lb %s dmon -e %s -d %d | LC_ALL=C bash -c 'while IFS= read -r l; do printf "%%s %%s\n" "$EPOCHREALTIME" "$l"; done'`,
			DefaultDCGMI, dcgmFields, ms)
	}
	return lineBuf + fmt.Sprintf("TZ=UTC exec $lb %s --query-gpu=%s --format=csv,noheader,nounits -lms %d",
		smi(nvidiaSMI), powerQueryFields, ms)
}

// smiTimeLayout is nvidia-smi's timestamp field.
const smiTimeLayout = "2006/01/02 15:04:05.000"

// ParsePowerSMI parses the nvidia-smi sampler's output (PowerSamplerCommand):
// lines of timestamp, index, power.draw, utilization.gpu, memory.used,
// clocks.sm, with or without units and header. A value nvidia-smi cannot
// give ([N/A], [Not Supported], any bracketed word) reads as -1. A line cut
// short (the sampler stopped mid-write) is skipped and counted in bad.
func ParsePowerSMI(out []byte) (samples []measure.PowerSample, bad int, err error) {
	for _, line := range csvLines(out) {
		f := splitCSV(line)
		if strings.EqualFold(f[0], "timestamp") {
			continue
		}
		if len(f) < 6 {
			bad++
			continue
		}
		t, err := time.ParseInLocation(smiTimeLayout, f[0], time.UTC)
		if err != nil {
			bad++
			continue
		}
		s, ok := powerValues(f[1:])
		if !ok {
			bad++
			continue
		}
		s.TimeNs = t.UnixNano()
		samples = append(samples, s)
	}
	if len(samples) == 0 && bad > 0 {
		return nil, bad, fmt.Errorf("nvidia-smi power readings: none of %d lines could be read", bad)
	}
	return samples, bad, nil
}

// ParsePowerDCGM parses the dcgm sampler's output: "EPOCH GPU N power util
// fb_used sm_clock" lines, dcgmi dmon's header lines ("#Entity …", "ID …")
// skipped. N/A reads as -1.
func ParsePowerDCGM(out []byte) (samples []measure.PowerSample, bad int, err error) {
	for _, line := range csvLines(out) {
		f := strings.Fields(line)
		if len(f) >= 2 && (strings.HasPrefix(f[1], "#") || f[1] == "ID") {
			continue
		}
		if len(f) < 7 || f[1] != "GPU" {
			bad++
			continue
		}
		sec, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			bad++
			continue
		}
		s, ok := powerValues(f[2:])
		if !ok {
			bad++
			continue
		}
		s.TimeNs = int64(sec * 1e9)
		samples = append(samples, s)
	}
	if len(samples) == 0 && bad > 0 {
		return nil, bad, fmt.Errorf("dcgmi power readings: none of %d lines could be read", bad)
	}
	return samples, bad, nil
}

// powerValues reads index, power, utilization, memory used, SM clock.
func powerValues(f []string) (measure.PowerSample, bool) {
	idx, err := strconv.Atoi(f[0])
	if err != nil || idx < 0 {
		return measure.PowerSample{}, false
	}
	p, err1 := parseReading(f[1], "W")
	u, err2 := parseReading(f[2], "%")
	m, err3 := parseReading(f[3], "MiB")
	c, err4 := parseReading(f[4], "MHz")
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return measure.PowerSample{}, false
	}
	return measure.PowerSample{GPU: idx, PowerW: p, UtilPct: u, MemMiB: int(m), SMMHz: int(c)}, true
}

// parseReading reads a number with or without its unit; a value the tool
// could not give (notAvailable) reads as -1.
func parseReading(s, unit string) (float64, error) {
	s = strings.TrimSpace(s)
	if notAvailable(s) {
		return -1, nil
	}
	s = strings.TrimSpace(strings.TrimSuffix(s, unit))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad value %q", s)
	}
	return v, nil
}

// notAvailable reports whether s is nvidia-smi's or dcgmi's word for a value
// it cannot give: [N/A], N/A, [Not Supported], or another bracketed reason
// ([Unknown Error], [Insufficient Permissions]).
func notAvailable(s string) bool {
	return strings.EqualFold(s, "N/A") || (strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"))
}
