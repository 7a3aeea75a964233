package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStopGrace measures how far a stop overruns its grace: a server
// that ignores SIGTERM is stopped with a 1 s grace, and the benchmark
// reports how long after SIGTERM the SIGKILL came, as the host timed it
// (term-wait-ms, median and max over the iterations), how long after the
// stop began the server's leader was dead, as this side saw it (dead-ms,
// which holds the snapshot before SIGTERM too, and does not trust the
// host's own account), and the whole stop (stop-ms). The promise is SIGKILL within about a
// second of the grace whatever the host's load, so the host is made busy
// on purpose:
//
//	BAKEOFF_STOP_IDLE=1000   idle processes beside the server (a GPU host
//	                         runs hundreds), each a sleep this benchmark
//	                         started and kills by pid
//	BAKEOFF_STOP_HOGS=2      busy-looping processes, one per core
//
//	go test -run '^$' -bench StopGrace -benchtime 10x ./remote
//
// docs/PERFORMANCE.md has the figures.
func BenchmarkStopGrace(b *testing.B) {
	const grace = time.Second
	idle := envInt(b, "BAKEOFF_STOP_IDLE")
	hogs := envInt(b, "BAKEOFF_STOP_HOGS")
	for range idle {
		startOwned(b, "sleep", "3600")
	}
	for range hogs {
		startOwned(b, "sh", "-c", "while :; do :; done")
	}
	ctx := context.Background()
	dir := b.TempDir()
	pidFile := filepath.Join(dir, "server.pid")
	var waits, stops, deaths []float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		pid, err := Start(ctx, NewLocal(), ProcessSpec{
			Command: `trap '' TERM; sh -c 'trap "" TERM; while :; do sleep 1; done' & while :; do sleep 1; done`,
			LogFile: filepath.Join(dir, "log"), PIDFile: pidFile,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		dead := make(chan time.Time, 1)
		go func() {
			for !gone(pid) {
				time.Sleep(5 * time.Millisecond)
			}
			dead <- time.Now()
		}()
		st, err := StopReport(ctx, NewLocal(), pidFile, grace)
		stops = append(stops, float64(time.Since(t0).Milliseconds()))
		deaths = append(deaths, float64((<-dead).Sub(t0).Milliseconds()))
		if err != nil {
			b.Fatal(err)
		}
		if !st.Killed() || len(st.Waits) == 0 {
			b.Fatalf("stop of a server that ignores SIGTERM: %+v, want TERM then KILL", st)
		}
		waits = append(waits, float64(st.Waits[0].Milliseconds()))
	}
	b.StopTimer()
	b.ReportMetric(median(waits), "term-wait-ms")
	b.ReportMetric(maxOf(waits), "max-term-wait-ms")
	b.ReportMetric(median(deaths), "dead-ms")
	b.ReportMetric(median(stops), "stop-ms")
}

// gone reports whether pid has exited: no longer in /proc, or a zombie
// that nobody reaps.
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndex(s, ") ")
	return i >= 0 && len(s) > i+2 && (s[i+2] == 'Z' || s[i+2] == 'X')
}

func envInt(b *testing.B, name string) int {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// startOwned starts a process in a group of its own and kills that group,
// by its pid, when the benchmark ends.
func startOwned(b *testing.B, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(fmt.Errorf("starting %s: %w", name, err))
	}
	b.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
