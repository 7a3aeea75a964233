package sim

import (
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
	used         int
}

var gpuFields = map[string]gpuField{
	"index":          {"index", "", func(g gpuView) string { return strconv.Itoa(g.index) }},
	"count":          {"count", "", func(g gpuView) string { return strconv.Itoa(g.count) }},
	"name":           {"name", "", func(gpuView) string { return GPUName }},
	"gpu_name":       {"name", "", func(gpuView) string { return GPUName }},
	"uuid":           {"uuid", "", func(g gpuView) string { return gpuUUID(g.index) }},
	"gpu_uuid":       {"uuid", "", func(g gpuView) string { return gpuUUID(g.index) }},
	"driver_version": {"driver_version", "", func(gpuView) string { return DriverVersion }},
	"pci.bus_id":     {"pci.bus_id", "", func(g gpuView) string { return fmt.Sprintf("00000000:%02X:00.0", 0x18+g.index*0x10) }},
	"memory.used":    {"memory.used [MiB]", "MiB", func(g gpuView) string { return strconv.Itoa(g.used) }},
	"memory.total":   {"memory.total [MiB]", "MiB", func(gpuView) string { return strconv.Itoa(GPUTotalMiB) }},
	"memory.free":    {"memory.free [MiB]", "MiB", func(g gpuView) string { return strconv.Itoa(GPUTotalMiB - g.used) }},
	"utilization.gpu": {"utilization.gpu [%]", "%", func(g gpuView) string {
		if g.used > idleGPUMiB {
			return "100"
		}
		return "0"
	}},
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
	"gpu_uuid":        {"gpu_uuid", "", func(h Holder) string { return gpuUUID(h.GPU) }},
}

func gpuUUID(i int) string { return fmt.Sprintf("GPU-5a1b0000-0000-4000-8000-%012x", i) }

// NvidiaSMI answers an nvidia-smi command line from the memory the live sim
// processes hold (the state directory of BAKEOFF_SIM_STATE) on a fake host
// of BAKEOFF_SIM_GPUS GPUs. It returns the exit status.
func NvidiaSMI(args []string, env SMIEnv) int {
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
	var gpuQ, appQ, format string
	list := false
	for _, a := range args {
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
	holders, err := LiveHolders(DefaultStateDir(env.Getenv), env.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "nvidia-smi (bakeoff sim): %v\n", err)
		return 15
	}
	switch {
	case list && gpuQ == "" && appQ == "":
		for i := range gpus {
			fmt.Fprintf(env.Stdout, "GPU %d: %s (UUID: %s)\n", i, GPUName, gpuUUID(i))
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
			g := gpuView{index: i, count: gpus, used: idleGPUMiB + used[i]}
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
		fmt.Fprintf(w, "|   %d  %s | %6dMiB / %6dMiB |\n", i, GPUName, idleGPUMiB+used[i], GPUTotalMiB)
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
