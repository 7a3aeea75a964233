// Package hoststate reads what is cheap to read of a host and tells a
// disturbed launch from a quiet one: around each sweep, the load average,
// the CPU's pressure stall information (PSI) and, where the host has
// nvidia-smi, each GPU's clocks, temperature, power, clock event
// (throttle) reasons and ECC errors; once per run, the kernel and the CPU
// frequency governor (facts.go). A run is a unit (its night's load,
// clocks and neighbours move all its figures alike), and a diff of two runs
// must say when the host was not in the same state for both.
package hoststate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// cpuCommand prints the CPU side of a reading, each file under a marker
// line: /proc/loadavg; /proc/pressure/cpu where the kernel has PSI (4.20
// on, CONFIG_PSI); the online CPUs, which the load is judged against; and
// /proc/uptime, the host's own clock, which times the sweep between two
// readings. A file that is missing prints nothing under its marker.
const cpuCommand = `echo '#loadavg'; cat /proc/loadavg 2>/dev/null; echo '#pressure'; cat /proc/pressure/cpu 2>/dev/null; ` +
	`echo '#cpus'; getconf _NPROCESSORS_ONLN 2>/dev/null; echo '#uptime'; cat /proc/uptime 2>/dev/null; `

// Command prints what Parse reads, in one round trip, on any Linux host.
// nvidiaSMI is the command that runs nvidia-smi on the host (it may carry
// a prefix, as campaign's gpu.nvidia_smi does), or "" for a host without
// GPUs. The GPU query is tried with the newer field names and the clock
// event counters first, then, where the driver refuses a field, with the
// set every driver knows (gpu.go); the marker says which answered. Only
// nvidia-smi's standard output is read, since a warning on its standard
// error (a corrupt infoROM) would break the rows; when neither query
// answers, the older one runs again with its errors, for the message,
// under a marker with the exit status.
func Command(nvidiaSMI string) string {
	if nvidiaSMI == "" {
		return cpuCommand + "true"
	}
	return cpuCommand + "q() { " + nvidiaSMI + " --query-gpu=$1 --format=csv,noheader,nounits; }; b=" + queryArg(queryOld) + "; " +
		"if o=$(q " + queryArg(queryNew) + " 2>/dev/null); then echo '" + markGPUNew + "'; " +
		"elif o=$(q $b 2>/dev/null); then echo '" + markGPUOld + "'; " +
		"else r=$?; o=$(q $b 2>&1); echo \"" + markGPUExit + " $r\"; fi; printf '%s\\n' \"$o\"; true"
}

// The GPU section's markers.
const (
	markGPUNew  = "#gpu new"
	markGPUOld  = "#gpu old"
	markGPUExit = "#gpu exit"
)

// State is one reading of a host.
type State struct {
	// Load1 is the 1-minute load average; Runnable the runnable tasks
	// (the fourth field's numerator).
	Load1    float64 `json:"load1"`
	Runnable int     `json:"runnable,omitempty"`
	// CPUSome10 is the share of the last 10 s in which some task waited
	// for a CPU, percent (PSI "some avg10"); nil where the kernel has no
	// PSI.
	CPUSome10 *float64 `json:"cpu_some_avg10,omitempty"`
	// CPUs is the host's online CPUs; 0 when unknown.
	CPUs int `json:"cpus,omitempty"`
	// UptimeS is the host's uptime at the reading, seconds: the time
	// between two readings by the host's own clock.
	UptimeS float64 `json:"uptime_s,omitempty"`
	// Driver is the NVIDIA driver's version and GPUs each GPU's state;
	// empty where nvidia-smi was not asked or did not answer.
	Driver string `json:"driver,omitempty"`
	GPUs   []GPU  `json:"gpus,omitempty"`
}

// GPUError is Parse's error when the CPU side of a reading was read and the
// GPU side was not: the State it returns holds the CPU side.
type GPUError struct {
	// Output is what nvidia-smi printed, shortened.
	Output string
	Err    error
}

func (e *GPUError) Error() string { return "nvidia-smi --query-gpu: " + e.Err.Error() }
func (e *GPUError) Unwrap() error { return e.Err }

// Parse reads Command's output. An error that is a *GPUError leaves the
// CPU side of the State read; any other leaves nothing worth keeping.
func Parse(out string) (State, error) {
	var s State
	sections := splitSections(out)
	if err := s.parseLoad(sections["#loadavg"]); err != nil {
		return s, err
	}
	if err := s.parsePressure(sections["#pressure"]); err != nil {
		return s, err
	}
	if len(sections["#cpus"]) > 0 {
		s.CPUs, _ = strconv.Atoi(sections["#cpus"][0])
	}
	if u := sections["#uptime"]; len(u) > 0 {
		if f := strings.Fields(u[0]); len(f) > 0 {
			s.UptimeS, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return s, s.parseGPU(sections)
}

// splitSections are out's non-empty lines under each marker line. A
// marker with a value after its name ("#gpu exit 2") keeps it in the key.
func splitSections(out string) map[string][]string {
	m := map[string][]string{}
	section := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"):
			section = line
			m[section] = nil
		case line != "":
			m[section] = append(m[section], line)
		}
	}
	return m
}

func (s *State) parseLoad(lines []string) error {
	if len(lines) == 0 {
		return errors.New("no /proc/loadavg in the host's answer")
	}
	line := lines[0]
	f := strings.Fields(line)
	if len(f) < 4 {
		return fmt.Errorf("/proc/loadavg: %q: want 5 fields", line)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return fmt.Errorf("/proc/loadavg: %q: %w", line, err)
	}
	s.Load1 = v
	if run, _, ok := strings.Cut(f[3], "/"); ok {
		s.Runnable, _ = strconv.Atoi(run)
	}
	return nil
}

func (s *State) parsePressure(lines []string) error {
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, "some ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(kv, "avg10="); ok {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return fmt.Errorf("/proc/pressure/cpu: %q: %w", line, err)
				}
				s.CPUSome10 = &x
			}
		}
	}
	return nil
}

// parseGPU reads the GPU section, if the command had one.
func (s *State) parseGPU(sections map[string][]string) error {
	for key, lines := range sections {
		var fields []gpuField
		switch {
		case key == markGPUNew:
			fields = queryNew
		case key == markGPUOld:
			fields = queryOld
		case strings.HasPrefix(key, markGPUExit):
			out := shorten(strings.Join(lines, " "))
			return &GPUError{Output: out, Err: fmt.Errorf("exit status %s: %s", strings.TrimSpace(strings.TrimPrefix(key, markGPUExit)), out)}
		default:
			continue
		}
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = f.names[0]
		}
		gpus, driver, err := ParseGPUs(names, strings.Join(lines, "\n"))
		if err != nil {
			return &GPUError{Output: shorten(strings.Join(lines, " ")), Err: err}
		}
		s.GPUs, s.Driver = gpus, driver
	}
	return nil
}

// shorten keeps an error's quote of the host's output readable.
func shorten(s string) string {
	const most = 200
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}

// KeepGPUs keeps only the GPUs of indices (a launch sharing its host with
// others reads only its own); nil keeps every GPU.
func (s *State) KeepGPUs(indices []int) {
	if s == nil || indices == nil {
		return
	}
	var kept []GPU
	for _, g := range s.GPUs {
		for _, i := range indices {
			if g.Index == i {
				kept = append(kept, g)
				break
			}
		}
	}
	s.GPUs = kept
}

// Launch is a launch's host state around its sweep.
type Launch struct {
	Before *State `json:"before,omitempty"`
	After  *State `json:"after,omitempty"`
}

// Load is the launch's mean 1-minute load over its readings, and whether
// it has any.
func (l *Launch) Load() (float64, bool) {
	if l == nil {
		return 0, false
	}
	var sum float64
	n := 0
	for _, s := range []*State{l.Before, l.After} {
		if s != nil {
			sum += s.Load1
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// Summary is a run's host load over its launches: the mean of their mean
// 1-minute loads and the largest, with how many launches had a reading.
type Summary struct {
	Mean, Max float64
	Launches  int
}

// Summarize is the summary of launches' states; Launches is 0 when none
// has a reading.
func Summarize(ls []*Launch) Summary {
	var s Summary
	for _, l := range ls {
		if v, ok := l.Load(); ok {
			s.Mean += v
			s.Max = max(s.Max, v)
			s.Launches++
		}
	}
	if s.Launches > 0 {
		s.Mean /= float64(s.Launches)
	}
	return s
}

// LoadDiffers says, in words, whether two runs' hosts were loaded
// differently enough to move their figures: the mean loads differ by more
// than one runnable task and by more than half the larger. Empty when
// they did not, or either run has no reading.
func LoadDiffers(old, new Summary) string {
	if old.Launches == 0 || new.Launches == 0 {
		return ""
	}
	hi, lo := max(old.Mean, new.Mean), min(old.Mean, new.Mean)
	if hi-lo <= 1 || hi-lo <= hi/2 {
		return ""
	}
	which := "new"
	if old.Mean > new.Mean {
		which = "old"
	}
	return fmt.Sprintf("the %s run ran on a busier host: load %.1f against %.1f (the mean 1-minute load average around each launch's sweep; at most %.1f against %.1f)",
		which, hi, lo, max(old.Max, new.Max), min(old.Max, new.Max))
}
