//go:build unix

package loadgen

import (
	"context"
	"os"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// The CPU benchmark's load (issue 12): C=32, 256 requests, 200 one-token
// chunks each, against a local SSE server in its own process.
const (
	cpuConcurrency = 32
	cpuRequests    = 256
	cpuChunks      = 200
	// cpuStep is the decode step of the "steps" server: every stream's
	// next chunk is written at the same tick, so each arrives on its own.
	cpuStep = 2 * time.Millisecond
)

// cpuServerEnv points BenchmarkClientCPU at a server that is already running
// (scripts/clientcpu.sh starts one and measures the reference client
// against the same one); unset, the benchmark starts its own.
const cpuServerEnv = "BAKEOFF_CPU_SERVER"

// BenchmarkClientCPU is the load generator's CPU cost per streamed chunk:
// user+system time of this process (getrusage) over one sweep level, divided
// by the chunks received, in µs. The server runs in a process of its own, so
// the figure is the client's alone; wall time is not reported because a
// shared machine makes it meaningless. The collector is set as bakeoff sweep
// sets it while it measures (cmd/bakeoff/gc.go).
func BenchmarkClientCPU(b *testing.B) {
	url := os.Getenv(cpuServerEnv)
	if url == "" {
		url, _ = startLoopServerProcess(b, "burst")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(800))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(2 << 30))
	set := uniquePrompts(b, cpuRequests)
	var cpu time.Duration
	chunks, failed := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := cpuTime(b)
		_, err := Run(context.Background(), Options{URL: url, Model: "loop", Concurrency: []int{cpuConcurrency},
			Requests: cpuRequests, Prompts: set, Records: func(r measure.Record) error {
				chunks += r.Chunks
				if !r.OK() {
					failed++
				}
				return nil
			}})
		cpu += cpuTime(b) - before
		if err != nil {
			b.Fatal(err)
		}
	}
	if failed > 0 || chunks != b.N*cpuRequests*cpuChunks {
		b.Fatalf("%d requests failed, %d chunks of %d", failed, chunks, b.N*cpuRequests*cpuChunks)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(chunks), "cpu-µs/chunk")
}

// cpuTime is this process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
