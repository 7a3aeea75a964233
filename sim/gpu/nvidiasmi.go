package gpu

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// SMIEnv is what the fake nvidia-smi needs from its process.
type SMIEnv struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Now            func() time.Time
}

// gpuField is a --query-gpu field: its header and its value for one GPU.
type gpuField struct {
	header string
	unit   string // appended (with a space) unless nounits
	value  func(g gpuView) string
}

type gpuView struct {
	index, count int
	computeCap   string
	used         int
	util         float64       // 0–1, from the engine's activity
	busy         time.Duration // the live engines' busy time on it
	throttle     uint64        // the clock event reasons while it works (SimGPUThrottleEnv)
	now          time.Time
}

// smiTimeLayout is nvidia-smi's timestamp field, in the process's local
// time zone (TZ).
const smiTimeLayout = "2006/01/02 15:04:05.000"

var gpuFields = map[string]gpuField{
	"index":              {"index", "", func(g gpuView) string { return strconv.Itoa(g.index) }},
	"count":              {"count", "", func(g gpuView) string { return strconv.Itoa(g.count) }},
	"name":               {"name", "", func(gpuView) string { return GPUName }},
	"compute_cap":        {"compute_cap", "", func(g gpuView) string { return g.computeCap }},
	"gpu_name":           {"name", "", func(gpuView) string { return GPUName }},
	"uuid":               {"uuid", "", func(g gpuView) string { return GPUUUID(g.index) }},
	"gpu_uuid":           {"uuid", "", func(g gpuView) string { return GPUUUID(g.index) }},
	"driver_version":     {"driver_version", "", func(gpuView) string { return DriverVersion }},
	"pci.bus_id":         {"pci.bus_id", "", func(g gpuView) string { return fmt.Sprintf("00000000:%02X:00.0", 0x18+g.index*0x10) }},
	"memory.used":        {"memory.used [MiB]", "MiB", func(g gpuView) string { return strconv.Itoa(g.used) }},
	"memory.total":       {"memory.total [MiB]", "MiB", func(gpuView) string { return strconv.Itoa(GPUTotalMiB) }},
	"memory.free":        {"memory.free [MiB]", "MiB", func(g gpuView) string { return strconv.Itoa(GPUTotalMiB - g.used) }},
	"utilization.gpu":    {"utilization.gpu [%]", "%", func(g gpuView) string { return strconv.Itoa(int(g.util*100 + 0.5)) }},
	"timestamp":          {"timestamp", "", func(g gpuView) string { return g.now.Format(smiTimeLayout) }},
	"power.draw":         {"power.draw [W]", "W", func(g gpuView) string { return fmt.Sprintf("%.2f", ModelPowerW(g.util)) }},
	"power.draw.average": {"power.draw.average [W]", "W", func(g gpuView) string { return fmt.Sprintf("%.2f", ModelPowerW(g.util)) }},
	"power.draw.instant": {"power.draw.instant [W]", "W", func(g gpuView) string { return fmt.Sprintf("%.2f", ModelPowerW(g.util)) }},
	"power.limit":        {"power.limit [W]", "W", func(gpuView) string { return fmt.Sprintf("%.2f", GPUMaxW) }},
	"clocks.sm":          {"clocks.current.sm [MHz]", "MHz", smClock},
	"clocks.current.sm":  {"clocks.current.sm [MHz]", "MHz", smClock},
	"clocks.max.sm":      {"clocks.max.sm [MHz]", "MHz", func(gpuView) string { return strconv.Itoa(GPUBoostSMMHz) }},
	// The memory clock reads its max while a CUDA context keeps the GPU
	// in P0, busy or not (an idle H200 read 3201 of 3201 MHz).
	"clocks.mem":                            {"clocks.current.memory [MHz]", "MHz", memClock},
	"clocks.current.memory":                 {"clocks.current.memory [MHz]", "MHz", memClock},
	"clocks.max.mem":                        {"clocks.max.memory [MHz]", "MHz", memClock},
	"clocks.max.memory":                     {"clocks.max.memory [MHz]", "MHz", memClock},
	"temperature.gpu":                       {"temperature.gpu", "", temperature},
	"enforced.power.limit":                  {"enforced.power.limit [W]", "W", func(gpuView) string { return fmt.Sprintf("%.2f", GPUMaxW) }},
	"ecc.errors.uncorrected.volatile.total": {"ecc.errors.uncorrected.volatile.total", "", func(gpuView) string { return "0" }},
	"persistence_mode":                      {"persistence_mode", "", func(gpuView) string { return "Enabled" }},
	// Drivers since the rename (between R525 and R550) know both names
	// and print the new.
	"clocks_event_reasons.active":                           {"clocks_event_reasons.active", "", activeReasons},
	"clocks_throttle_reasons.active":                        {"clocks_event_reasons.active", "", activeReasons},
	"clocks_event_reasons_counters.sw_power_cap":            counterField("sw_power_cap", reasonSWPowerCap),
	"clocks_event_reasons_counters.sw_thermal_slowdown":     counterField("sw_thermal_slowdown", reasonSWThermal),
	"clocks_event_reasons_counters.hw_thermal_slowdown":     counterField("hw_thermal_slowdown", reasonHWThermal),
	"clocks_event_reasons_counters.hw_power_brake_slowdown": counterField("hw_power_brake_slowdown", reasonHWPowerBrake),
}

// The fake GPUs' other readings, of the order an RTX PRO 6000 reads
// (assumptions, not measurements): the GDDR7 memory clock, and the core
// temperature idle, at full work, and at work while a thermal reason
// holds it down.
const (
	GPUMemMHz = 14001
	GPUIdleC  = 32
	GPUBusyC  = 68
	GPUHotC   = 92
)

// smClock is the SM clock: boost while the engine steps, idle otherwise;
// halved at work by a HW slowdown ("reducing the core clocks by a factor of
// 2 or more", nvidia-smi --help-query-gpu), a fifth down by a SW one.
func smClock(g gpuView) string {
	r := g.reasons()
	switch {
	case g.util <= 0:
		return strconv.Itoa(GPUIdleSMMHz)
	case r&reasonsHalvingClocks != 0:
		return strconv.Itoa(GPUBoostSMMHz / 2)
	case r != 0:
		return strconv.Itoa(GPUBoostSMMHz * 4 / 5)
	}
	return strconv.Itoa(GPUBoostSMMHz)
}

func memClock(gpuView) string { return strconv.Itoa(GPUMemMHz) }

// temperature follows the work, and runs hot on a GPU a thermal reason
// holds down.
func temperature(g gpuView) string {
	if g.util > 0 && g.reasons()&reasonsHot != 0 {
		return strconv.Itoa(GPUHotC)
	}
	return strconv.Itoa(GPUIdleC + int(float64(GPUBusyC-GPUIdleC)*min(max(g.util, 0), 1)+0.5))
}

// activeReasons is the bitmask as nvidia-smi prints it.
func activeReasons(g gpuView) string { return fmt.Sprintf("0x%016x", g.reasons()) }

func counterField(name string, reason uint64) gpuField {
	return gpuField{"clocks_event_reasons_counters." + name + " [us]", "us", func(g gpuView) string { return g.counter(reason) }}
}

// appField is a --query-compute-apps field.
type appField struct {
	header string
	unit   string
	value  func(h Holder) string
}

var appFields = map[string]appField{
	"pid":             {"pid", "", func(h Holder) string { return strconv.Itoa(h.PID) }},
	"process_name":    {"process_name", "", func(h Holder) string { return h.Name }},
	"name":            {"process_name", "", func(h Holder) string { return h.Name }},
	"used_memory":     {"used_gpu_memory [MiB]", "MiB", func(h Holder) string { return strconv.Itoa(h.MiB) }},
	"used_gpu_memory": {"used_gpu_memory [MiB]", "MiB", func(h Holder) string { return strconv.Itoa(h.MiB) }},
	"gpu_uuid":        {"gpu_uuid", "", func(h Holder) string { return GPUUUID(h.GPU) }},
}

func GPUUUID(i int) string { return fmt.Sprintf("GPU-5a1b0000-0000-4000-8000-%012x", i) }

// NvidiaSMI answers an nvidia-smi command line from the memory the live sim
// processes hold and their engines' activity (the state directory of
// BAKEOFF_SIM_STATE) on a fake host of BAKEOFF_SIM_GPUS GPUs. With -lms N
// (or -l N, seconds) a query repeats every interval until ctx ends, as
// nvidia-smi's loop runs until Ctrl+C. It returns the exit status.
func NvidiaSMI(ctx context.Context, args []string, env SMIEnv) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	gpus := DefaultGPUs
	if v := env.Getenv(SimGPUsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fmt.Fprintf(env.Stderr, "nvidia-smi (bakeoff sim): bad %s=%q\n", SimGPUsEnv, v)
			return 2
		}
		gpus = n
	}
	cc, err := ComputeCap(env.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nvidia-smi (bakeoff sim): %v\n", err)
		return 2
	}
	throttle, err := Throttle(env.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nvidia-smi (bakeoff sim): %v\n", err)
		return 2
	}
	var gpuQ, appQ, format string
	list := false
	var loop time.Duration
	for i := 0; i < len(args); i++ {
		a := args[i]
		if unit, v, ok := loopFlag(a); ok {
			if v == "" {
				if i+1 >= len(args) {
					return invalidArgs(env)
				}
				i++
				v = args[i]
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return invalidArgs(env)
			}
			loop = time.Duration(n) * unit
			continue
		}
		switch {
		case strings.HasPrefix(a, "--query-gpu="):
			gpuQ = strings.TrimPrefix(a, "--query-gpu=")
		case strings.HasPrefix(a, "--query-compute-apps="):
			appQ = strings.TrimPrefix(a, "--query-compute-apps=")
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		case a == "-L" || a == "--list-gpus":
			list = true
		default:
			return invalidArgs(env)
		}
	}
	if loop > 0 && gpuQ == "" && appQ == "" {
		return invalidArgs(env)
	}
	for {
		code := smiOnce(args, env, gpus, cc, throttle, gpuQ, appQ, format, list)
		if code != 0 || loop <= 0 {
			return code
		}
		t := time.NewTimer(loop)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0
		case <-t.C:
		}
	}
}

// loopFlag recognises -lms/--loop-ms= (milliseconds) and -l/--loop=
// (seconds); v is the value when the flag carries it.
func loopFlag(a string) (unit time.Duration, v string, ok bool) {
	switch {
	case a == "-lms":
		return time.Millisecond, "", true
	case strings.HasPrefix(a, "--loop-ms="):
		return time.Millisecond, strings.TrimPrefix(a, "--loop-ms="), true
	case a == "-l":
		return time.Second, "", true
	case strings.HasPrefix(a, "--loop="):
		return time.Second, strings.TrimPrefix(a, "--loop="), true
	}
	return 0, "", false
}

// smiOnce answers the query once.
func smiOnce(args []string, env SMIEnv, gpus int, cc string, throttle map[int]uint64, gpuQ, appQ, format string, list bool) int {
	now := env.Now()
	holders, err := LiveHolders(DefaultStateDir(env.Getenv), now)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nvidia-smi (bakeoff sim): %v\n", err)
		return 15
	}
	activity, err := LiveActivity(DefaultStateDir(env.Getenv), now)
	if err != nil {
		fmt.Fprintf(env.Stderr, "nvidia-smi (bakeoff sim): %v\n", err)
		return 15
	}
	switch {
	case list && gpuQ == "" && appQ == "":
		for i := range gpus {
			fmt.Fprintf(env.Stdout, "GPU %d: %s (UUID: %s)\n", i, GPUName, GPUUUID(i))
		}
		return 0
	case len(args) == 0:
		return summary(env.Stdout, gpus, holders)
	case (gpuQ == "") == (appQ == "") || list:
		return invalidArgs(env)
	}
	header, units, ok := parseFormat(format)
	if !ok {
		return invalidArgs(env)
	}
	var rows [][]string
	var heads []string
	if gpuQ != "" {
		used := make([]int, gpus)
		for _, h := range holders {
			if h.GPU < gpus {
				used[h.GPU] += h.MiB
			}
		}
		var fields []gpuField
		for _, name := range strings.Split(gpuQ, ",") {
			f, ok := gpuFields[strings.TrimSpace(name)]
			if !ok {
				return badField(env, name, "--help-query-gpu")
			}
			fields = append(fields, f)
			heads = append(heads, f.header)
		}
		for i := range gpus {
			g := gpuView{index: i, count: gpus, computeCap: cc, used: IdleGPUMiB + used[i], util: activity[i].Util, busy: activity[i].Busy,
				throttle: throttle[i], now: now.In(smiZone(env))}
			row := make([]string, len(fields))
			for j, f := range fields {
				row[j] = withUnit(f.value(g), f.unit, units)
			}
			rows = append(rows, row)
		}
	} else {
		var fields []appField
		for _, name := range strings.Split(appQ, ",") {
			f, ok := appFields[strings.TrimSpace(name)]
			if !ok {
				return badField(env, name, "--help-query-compute-apps")
			}
			fields = append(fields, f)
			heads = append(heads, f.header)
		}
		for _, h := range holders {
			if h.GPU >= gpus {
				continue
			}
			row := make([]string, len(fields))
			for j, f := range fields {
				row[j] = withUnit(f.value(h), f.unit, units)
			}
			rows = append(rows, row)
		}
	}
	if header {
		fmt.Fprintln(env.Stdout, strings.Join(heads, ", "))
	}
	for _, r := range rows {
		fmt.Fprintln(env.Stdout, strings.Join(r, ", "))
	}
	return 0
}

// smiZone is the time zone of the timestamp field: $TZ, as nvidia-smi's
// localtime reads it, else the process's local zone.
func smiZone(env SMIEnv) *time.Location {
	if tz := env.Getenv("TZ"); tz != "" {
		if loc, err := time.LoadLocation(tz); err == nil {
			return loc
		}
	}
	return time.Local
}

func withUnit(v, unit string, units bool) string {
	if unit == "" || !units {
		return v
	}
	return v + " " + unit
}

// parseFormat reads --format=csv[,noheader][,nounits].
func parseFormat(f string) (header, units, ok bool) {
	parts := strings.Split(f, ",")
	if parts[0] != "csv" {
		return false, false, false
	}
	header, units = true, true
	for _, p := range parts[1:] {
		switch strings.TrimSpace(p) {
		case "noheader":
			header = false
		case "nounits":
			units = false
		default:
			return false, false, false
		}
	}
	return header, units, true
}

func invalidArgs(env SMIEnv) int {
	fmt.Fprintln(env.Stderr, "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.")
	return 2
}

func badField(env SMIEnv, name, help string) int {
	fmt.Fprintf(env.Stderr, "Field \"%s\" is not a valid field to query.\n\nSee 'nvidia-smi %s' for help on how to call it.\n", strings.TrimSpace(name), help)
	return 2
}

// summary prints a short version of nvidia-smi's default table.
func summary(w io.Writer, gpus int, holders []Holder) int {
	used := make([]int, gpus)
	for _, h := range holders {
		if h.GPU < gpus {
			used[h.GPU] += h.MiB
		}
	}
	fmt.Fprintf(w, "| NVIDIA-SMI %s (bakeoff sim)   Driver Version: %s   CUDA Version: 13.1 |\n", DriverVersion, DriverVersion)
	for i := range gpus {
		fmt.Fprintf(w, "|   %d  %s | %6dMiB / %6dMiB |\n", i, GPUName, IdleGPUMiB+used[i], GPUTotalMiB)
	}
	fmt.Fprintln(w, "| Processes:")
	if len(holders) == 0 {
		fmt.Fprintln(w, "|  No running processes found")
	}
	for _, h := range holders {
		fmt.Fprintf(w, "|   %d   N/A  N/A  %8d  C  %-28s %6dMiB |\n", h.GPU, h.PID, h.Name, h.MiB)
	}
	return 0
}
