// Package hoststate reads what is cheap to read of a host and tells a
// disturbed launch from a quiet one: the load average and the CPU's
// pressure stall information (PSI), read around each sweep. A run is a
// unit (its night's load, clocks and neighbours move all its figures
// alike), and a diff of two runs must say when the host was not in the
// same state for both.
package hoststate

import (
	"fmt"
	"strconv"
	"strings"
)

// Command prints what Parse reads, in one round trip, on any Linux host:
// /proc/loadavg, then /proc/pressure/cpu where the kernel has PSI (4.20
// on, CONFIG_PSI), each under a marker line. A file that is missing prints
// nothing under its marker.
const Command = `echo '#loadavg'; cat /proc/loadavg 2>/dev/null; echo '#pressure'; cat /proc/pressure/cpu 2>/dev/null; true`

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
}

// Parse reads Command's output.
func Parse(out string) (State, error) {
	var s State
	section := ""
	seen := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			section = line
			continue
		}
		if line == "" {
			continue
		}
		switch section {
		case "#loadavg":
			f := strings.Fields(line)
			if len(f) < 4 {
				return s, fmt.Errorf("/proc/loadavg: %q: want 5 fields", line)
			}
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				return s, fmt.Errorf("/proc/loadavg: %q: %w", line, err)
			}
			s.Load1, seen = v, true
			if run, _, ok := strings.Cut(f[3], "/"); ok {
				s.Runnable, _ = strconv.Atoi(run)
			}
		case "#pressure":
			rest, ok := strings.CutPrefix(line, "some ")
			if !ok {
				continue
			}
			for _, kv := range strings.Fields(rest) {
				if v, ok := strings.CutPrefix(kv, "avg10="); ok {
					x, err := strconv.ParseFloat(v, 64)
					if err != nil {
						return s, fmt.Errorf("/proc/pressure/cpu: %q: %w", line, err)
					}
					s.CPUSome10 = &x
				}
			}
		}
	}
	if !seen {
		return s, fmt.Errorf("no /proc/loadavg in %q", out)
	}
	return s, nil
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
