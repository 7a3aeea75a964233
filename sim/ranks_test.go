package sim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// rankArgs is a node of a two-node tp-4 group rendezvousing at addr.
func rankArgs(rank int, addr string, extra ...string) []string {
	return append([]string{"--tp-size", "4", "--nnodes", "2", "--node-rank", strconv.Itoa(rank), "--dist-init-addr", addr}, extra...)
}

func distAddr(t *testing.T) string { return fmt.Sprintf("127.0.0.1:%d", freePort(t)) }

// computeApps is the process names the fake nvidia-smi lists for the sim's
// host.
func (p *simProc) computeApps() string {
	return p.smi("--query-compute-apps=process_name", "--format=csv,noheader")
}

// TestRanksRendezvous: node 0 holds back (no memory, health 503) until node
// 1 has joined, then both load; node 0 serves the API, node 1 only SGLang's
// dummy health check, and each node's ranks hold memory on its own host.
func TestRanksRendezvous(t *testing.T) {
	addr := distAddr(t)
	r0 := startSim(t, nil, rankArgs(0, addr, "--enable-metrics")...)
	if !waitFor(t, 20*time.Second, func() bool { return status(r0.url("/health")) == 503 }) {
		t.Fatalf("node 0 never answered health:\n%s", simtest.Tail(r0.log.String(), 20))
	}
	// Many load times (50 ms each) pass: node 0 is still forming its group.
	time.Sleep(500 * time.Millisecond)
	if got := status(r0.url("/health")); got != 503 {
		t.Fatalf("node 0 answers health %d before node 1 joined, want 503", got)
	}
	if log := r0.log.String(); !strings.Contains(log, "TP0] Init torch distributed begin.") || strings.Contains(log, "Init torch distributed ends") {
		t.Fatalf("node 0 should be waiting in init_torch_distributed:\n%s", simtest.Tail(log, 20))
	}
	if apps := r0.computeApps(); apps != "" {
		t.Fatalf("node 0 holds memory before its group formed:\n%s", apps)
	}

	r1 := startSim(t, nil, rankArgs(1, addr, "--enable-metrics")...)
	r0.waitHealthy()
	if !waitFor(t, 20*time.Second, func() bool { return status(r1.url("/health")) == 200 }) {
		t.Fatalf("node 1's dummy health check never answered 200:\n%s", simtest.Tail(r1.log.String(), 20))
	}
	for path, want := range map[string]int{"/health_generate": 200, "/ping": 200, "/metrics": 200, "/v1/models": 404, "/server_info": 404} {
		if got := status(r1.url(path)); got != want {
			t.Errorf("node 1 %s: %d, want %d", path, got, want)
		}
	}
	code, evs := post(t, r0.url("/v1/completions"), map[string]any{"prompt": "two nodes", "max_tokens": 8, "ignore_eos": true})
	if code != 200 || !strings.Contains(evs[0].raw, `"completion_tokens":8`) {
		t.Fatalf("node 0 completion: %d %s", code, evs[0].raw)
	}
	if log := r0.log.String(); !strings.Contains(log, "bakeoff sim: node rank 1 joined from") {
		t.Errorf("node 0 never logged node 1 joining:\n%s", simtest.Tail(log, 30))
	}
	if log := r1.log.String(); !strings.Contains(log, "Starting dummy health check server at") || strings.Contains(log, "fired up") {
		t.Errorf("node 1 should start the dummy health check and never serve:\n%s", simtest.Tail(log, 30))
	}
	for _, tc := range []struct {
		p    *simProc
		want string
	}{{r0, "sglang::scheduler_TP0\nsglang::scheduler_TP1\n"}, {r1, "sglang::scheduler_TP2\nsglang::scheduler_TP3\n"}} {
		if !waitFor(t, 10*time.Second, func() bool { return tc.p.computeApps() == tc.want }) {
			t.Errorf("compute apps %q, want %q", tc.p.computeApps(), tc.want)
		}
	}
}

// TestRankDeath: a node that dies takes the group down as NCCL would. The
// survivor hangs (node 0 answers 503) for the watchdog's timeout, then ends
// with the watchdog's line, NCCL's error for a remote that exited, and exit
// status 1. Node 1 starts first here, so it also retries until node 0
// listens.
func TestRankDeath(t *testing.T) {
	for _, victim := range []int{1, 0} {
		t.Run(fmt.Sprintf("node %d dies", victim), func(t *testing.T) {
			addr := distAddr(t)
			// 30 simulated seconds: 0.3 s of wall time at the tests' speed.
			wd := []string{"--watchdog-timeout", "30"}
			r1 := startSim(t, nil, rankArgs(1, addr, wd...)...)
			waitFor(t, 5*time.Second, func() bool { return strings.Contains(r1.log.String(), "failed to connect") })
			r0 := startSim(t, nil, rankArgs(0, addr, wd...)...)
			r0.waitHealthy()
			waitFor(t, 20*time.Second, func() bool { return status(r1.url("/health")) == 200 })
			nodes := []*simProc{r0, r1}
			dead, survivor := nodes[victim], nodes[1-victim]
			dead.cmd.Process.Kill()
			dead.wait(10 * time.Second)
			if victim == 1 && !waitFor(t, 5*time.Second, func() bool { return status(r0.url("/health")) == 503 }) {
				t.Error("node 0 still answers health while stuck in a collective with a dead peer")
			}
			if code := survivor.wait(20 * time.Second); code != 1 {
				t.Errorf("survivor exited %d, want 1", code)
			}
			log := survivor.log.String()
			for _, want := range []string{
				"NCCL WARN Connection closed by remote peer 127.0.0.1<",
				fmt.Sprintf("bakeoff sim: lost node rank %d", victim),
				"Scheduler watchdog timeout (self.watchdog_timeout=30.0, self.soft=False)",
				"Scheduler hit an exception: Traceback (most recent call last):",
				"RuntimeError: NCCL error: remote process exited or there was a network error",
				"Received sigquit from a child process. It usually means the child failed.",
			} {
				if !strings.Contains(log, want) {
					t.Errorf("survivor's log lacks %q:\n%s", want, simtest.Tail(log, 30))
				}
			}
			if victim == 0 && !strings.Contains(r1.log.String(), "[c10d] The client socket has failed to connect to [127.0.0.1]") {
				t.Errorf("node 1 started first but never retried node 0:\n%s", simtest.Tail(r1.log.String(), 30))
			}
		})
	}
}

// TestRankDistTimeout: --dist-timeout ends a node whose group never forms,
// in torch's words on either side.
func TestRankDistTimeout(t *testing.T) {
	for _, tc := range []struct {
		rank int
		want string
	}{
		{0, "torch.distributed.DistStoreError: Timed out after 20 seconds waiting for clients. 1/2 clients joined."},
		{1, "torch.distributed.DistNetworkError: The client socket has timed out after 20s while trying to connect to (127.0.0.1, "},
	} {
		t.Run(fmt.Sprintf("node %d", tc.rank), func(t *testing.T) {
			p := startSim(t, nil, rankArgs(tc.rank, distAddr(t), "--dist-timeout", "20")...)
			if code := p.wait(20 * time.Second); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if log := p.log.String(); !strings.Contains(log, tc.want) {
				t.Errorf("log lacks %q:\n%s", tc.want, simtest.Tail(log, 20))
			}
		})
	}
}
