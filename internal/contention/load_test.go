package contention

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoads starts each kind of contention, waits until it has burnt CPU
// (and, for a build, until it has run several processes one after
// another), stops it and checks that nothing it started is left.
func TestLoads(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kind Kind
		// leaders is how many processes the load leads; processes, how
		// many distinct ones its groups must have run.
		leaders, processes int
	}{
		{None, 0, 0},
		{Busy, 1, 1},
		{Pulse, 1, 1},
		{Compile, runtime.NumCPU(), runtime.NumCPU() + 4},
	} {
		t.Run(string(tt.kind), func(t *testing.T) {
			l, err := Start(tt.kind, exe, 7)
			if err != nil {
				t.Fatal(err)
			}
			leaders := l.PIDs()
			if len(leaders) != tt.leaders {
				t.Errorf("%d group leaders, want %d", len(leaders), tt.leaders)
			}
			seen := map[int]bool{}
			var cpu time.Duration
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				cpu = 0
				for _, p := range groupsOf(leaders) {
					seen[p.pid] = true
					cpu += p.cpu
				}
				if len(seen) >= tt.processes && (tt.processes == 0 || cpu > 0) {
					break
				}
			}
			if len(seen) < tt.processes || (tt.processes > 0 && cpu == 0) {
				t.Errorf("saw %d processes burning %v of CPU, want %d processes and some CPU", len(seen), cpu, tt.processes)
			}
			if err := l.Stop(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if len(groupsOf(leaders)) == 0 {
					return
				}
			}
			t.Errorf("left running after Stop: %v", groupsOf(leaders))
		})
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("make"); err == nil || !strings.Contains(err.Error(), "unknown contention kind") {
		t.Errorf("ParseKind(make): %v, want an unknown kind", err)
	}
}

// userHZ is the kernel's clock tick for the CPU times in /proc/PID/stat:
// 100 on every Linux architecture Go supports.
const userHZ = 100

// proc is one live process of a load's groups.
type proc struct {
	pid int
	cpu time.Duration
}

// groupsOf are the live (not zombie) processes whose process group is led
// by one of leaders.
func groupsOf(leaders []int) []proc {
	var out []proc
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		// f[0] is the state (field 3), f[2] the process group (field 5),
		// f[11] and f[12] utime and stime (fields 14 and 15), in ticks.
		if len(f) < 13 || f[0] == "Z" {
			continue
		}
		pgid, _ := strconv.Atoi(f[2])
		if !slices.Contains(leaders, pgid) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		ut, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		out = append(out, proc{pid: pid, cpu: time.Duration(ut+st) * time.Second / userHZ})
	}
	return out
}
