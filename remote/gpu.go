package remote

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// DefaultNvidiaSMI is the command GPU queries run when none is configured.
const DefaultNvidiaSMI = "nvidia-smi"

// The nvidia-smi queries, without headers or units, so every line is values.
const (
	queryGPUs        = "--query-gpu=index,name,memory.used,memory.total --format=csv,noheader,nounits"
	queryComputeApps = "--query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits"
	queryFacts       = "--query-gpu=driver_version,name --format=csv,noheader"
)

// GPU is one device's memory as nvidia-smi reports it.
type GPU struct {
	Index    int
	Name     string
	UsedMiB  int // -1 when nvidia-smi says [N/A]
	TotalMiB int // -1 when nvidia-smi says [N/A]
}

// GPUProcess is a compute process holding GPU memory.
type GPUProcess struct {
	PID     int
	Name    string
	UsedMiB int // -1 when nvidia-smi says [N/A]
}

// ParseGPUs parses `nvidia-smi --query-gpu=index,name,memory.used,memory.total
// --format=csv[,noheader][,nounits]` (the name column may be absent). Blank
// lines and a header line are skipped; [N/A] values read as -1; empty output
// is no GPUs.
func ParseGPUs(out []byte) ([]GPU, error) {
	var gpus []GPU
	for i, line := range csvLines(out) {
		f := splitCSV(line)
		if isHeader(f) {
			continue
		}
		if len(f) < 3 {
			return nil, fmt.Errorf("nvidia-smi GPU line %d: %q: want index, [name,] used, total", i+1, shorten(line, 120))
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil || idx < 0 {
			return nil, fmt.Errorf("nvidia-smi GPU line %d: %q: bad index", i+1, shorten(line, 120))
		}
		used, err1 := parseMiB(f[len(f)-2])
		total, err2 := parseMiB(f[len(f)-1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("nvidia-smi GPU line %d: %q: bad memory value", i+1, shorten(line, 120))
		}
		gpus = append(gpus, GPU{Index: idx, Name: strings.Join(f[1:len(f)-2], ", "), UsedMiB: used, TotalMiB: total})
	}
	return gpus, nil
}

// ParseComputeApps parses `nvidia-smi --query-compute-apps=pid,process_name,
// used_memory --format=csv[,noheader][,nounits]`. Blank lines, a header and
// "No running processes found" are skipped; [N/A] memory reads as -1.
func ParseComputeApps(out []byte) ([]GPUProcess, error) {
	var ps []GPUProcess
	for i, line := range csvLines(out) {
		f := splitCSV(line)
		if isHeader(f) || strings.HasPrefix(strings.ToLower(line), "no running") {
			continue
		}
		if len(f) < 3 {
			return nil, fmt.Errorf("nvidia-smi process line %d: %q: want pid, name, used memory", i+1, shorten(line, 120))
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid < 0 {
			return nil, fmt.Errorf("nvidia-smi process line %d: %q: bad pid", i+1, shorten(line, 120))
		}
		used, err := parseMiB(f[len(f)-1])
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi process line %d: %q: bad memory value", i+1, shorten(line, 120))
		}
		// A process name may itself hold ", ".
		ps = append(ps, GPUProcess{PID: pid, Name: strings.Join(f[1:len(f)-1], ", "), UsedMiB: used})
	}
	return ps, nil
}

// csvLines returns the non-blank lines of out, trimmed.
func csvLines(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func splitCSV(line string) []string {
	f := strings.Split(line, ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

// isHeader reports whether a line is nvidia-smi's CSV header ("index, name,
// memory.used [MiB], ..." or "pid, process_name, used_gpu_memory [MiB]").
func isHeader(f []string) bool {
	switch strings.ToLower(f[0]) {
	case "index", "pid", "driver_version":
		return true
	}
	return false
}

// parseMiB reads "21090", "21090 MiB" or "[N/A]" (-1).
func parseMiB(s string) (int, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "MiB"))
	if notAvailable(s) {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad MiB value %q", s)
	}
	return n, nil
}

// smi returns the command for nvidia-smi: nvidiaSMI as given (a command line
// prefix, not quoted, so it may carry arguments) or DefaultNvidiaSMI.
func smi(nvidiaSMI string) string {
	if strings.TrimSpace(nvidiaSMI) == "" {
		return DefaultNvidiaSMI
	}
	return nvidiaSMI
}

// QueryGPUs returns every GPU's memory and every compute process on h.
// nvidiaSMI is the command to run ("" = nvidia-smi).
func QueryGPUs(ctx context.Context, h Host, nvidiaSMI string) ([]GPU, []GPUProcess, error) {
	cmd := smi(nvidiaSMI)
	out, _, err := h.Run(ctx, cmd+" "+queryGPUs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: querying GPU memory: %w", h.Name(), err)
	}
	gpus, err := ParseGPUs(out)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: querying GPU memory: %w", h.Name(), err)
	}
	out, _, err = h.Run(ctx, cmd+" "+queryComputeApps)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: querying GPU processes: %w", h.Name(), err)
	}
	procs, err := ParseComputeApps(out)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: querying GPU processes: %w", h.Name(), err)
	}
	return gpus, procs, nil
}

// GPUFacts returns h's driver version and the name of each GPU, in index
// order, for the record of a run.
func GPUFacts(ctx context.Context, h Host, nvidiaSMI string) (driver string, names []string, err error) {
	out, _, err := h.Run(ctx, smi(nvidiaSMI)+" "+queryFacts)
	if err != nil {
		return "", nil, fmt.Errorf("%s: reading GPU facts: %w", h.Name(), err)
	}
	for _, line := range csvLines(out) {
		f := splitCSV(line)
		if isHeader(f) {
			continue
		}
		if len(f) < 2 {
			return "", nil, fmt.Errorf("%s: reading GPU facts: unexpected line %q", h.Name(), shorten(line, 120))
		}
		if driver == "" {
			driver = f[0]
		}
		names = append(names, strings.Join(f[1:], ", "))
	}
	return driver, names, nil
}
