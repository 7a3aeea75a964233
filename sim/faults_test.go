package sim

import (
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/sglog"
)

func TestFaultDieDuringLoad(t *testing.T) {
	p := startSim(t, nil, "--tp", "2", "--sim-fault", "die-during-load")
	if code := p.wait(10 * time.Second); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	log := p.log.String()
	for _, want := range []string{"Traceback (most recent call last)", "Rank 0 scheduler is dead", "Initialization failed"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if strings.Contains(log, "ready to roll") {
		t.Error("a server that died while loading said it was ready")
	}
	if !waitFor(t, 5*time.Second, func() bool { return len(p.liveChildren()) == 0 }) {
		t.Errorf("children outlived the dead server: %v", p.liveChildren())
	}
}

func TestFaultHangDuringLoad(t *testing.T) {
	p := startSim(t, nil, "--tp", "2", "--sim-fault", "hang-during-load")
	if !waitFor(t, 10*time.Second, func() bool { return strings.Contains(p.log.String(), "Capture cuda graph begin") }) {
		t.Fatal("the load never reached the cuda graph capture")
	}
	// The whole load takes 50 ms; well past it, health must still be 503.
	time.Sleep(300 * time.Millisecond)
	if got := status(p.url("/health")); got != 503 {
		t.Errorf("/health of a hung server: %d, want 503", got)
	}
	if p.exited() {
		t.Fatal("a hung server exited")
	}
	log := p.log.String()
	if !strings.Contains(log, "Capture cuda graph begin") || strings.Contains(log, "Capture cuda graph end") {
		t.Errorf("hang should stop after the cuda graph capture begins:\n%s", simtest.Tail(log, 5))
	}
	// It still holds its memory, as a hung NCCL init does.
	if out := p.smi("--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"); strings.Count(out, "sglang::scheduler_TP") != 2 {
		t.Errorf("compute apps of a hung server:\n%s", out)
	}
}

func TestFaultCrashOnFirstRequest(t *testing.T) {
	p := startSim(t, nil, append(strings.Fields(simtest.Topk1), "--sim-fault", "crash-on-first-request")...)
	p.waitHealthy()
	if got := status(p.url("/health_generate")); got != 200 {
		t.Errorf("health before the first request: %d", got)
	}
	if err := tryPost(p.url("/v1/chat/completions"), chatBody("hello", 20)); err == nil {
		t.Error("the crashing request completed")
	}
	if code := p.wait(10 * time.Second); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	log := strings.TrimRight(p.log.String(), "\n")
	if !strings.Contains(log, "Traceback (most recent call last)") || !strings.HasSuffix(log, sglog.FirstRequestError) {
		t.Errorf("log should end with the EAGLE worker traceback:\n%s", simtest.Tail(log, 12))
	}
}

func TestFaultCrashAfter(t *testing.T) {
	p := startSim(t, nil, "--tp", "1", "--sim-fault", "crash-after=3")
	p.waitHealthy()
	for i := range 3 {
		if code, evs := post(t, p.url("/v1/chat/completions"), chatBody("q"+strconv.Itoa(i), 10)); code != 200 {
			t.Fatalf("request %d: %d", i, code)
		} else if _, _, _, done := streamText(evs); !done {
			t.Fatalf("request %d cut before the crash point", i)
		}
	}
	if code := p.wait(10 * time.Second); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(p.log.String(), "CUDA error: an illegal memory access was encountered") {
		t.Error("no crash traceback in the log")
	}
}

func TestFaultIgnoreSigterm(t *testing.T) {
	p := startSim(t, nil, "--tp", "1", "--sim-fault", "ignore-sigterm=1500ms")
	p.waitHealthy()
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	if p.exited() || status(p.url("/health")) != 200 {
		t.Fatal("the server stopped serving right after SIGTERM")
	}
	p.wait(10 * time.Second)
	if el := time.Since(start); el < 1500*time.Millisecond {
		t.Errorf("exited %v after SIGTERM, want ≥ 1.5s", el)
	}
}

// TestFaultIgnoreSigtermUntilKilled: a bare ignore-sigterm keeps serving
// after SIGTERM until SIGKILL, so a test of the orchestrator's escalation
// does not race the fault's own timer.
func TestFaultIgnoreSigtermUntilKilled(t *testing.T) {
	var f cmdline.Faults
	if err := f.Add("ignore-sigterm"); err != nil || f.IgnoreSigterm != cmdline.IgnoreForever {
		t.Fatalf("Add(ignore-sigterm) = %v, IgnoreSigterm %v; want until killed", err, f.IgnoreSigterm)
	}
	if err := (&cmdline.Faults{}).Add("ignore-sigterm="); err == nil {
		t.Error("ignore-sigterm= with an empty value was accepted")
	}
	p := startSim(t, nil, "--tp", "1", "--sim-fault", "ignore-sigterm")
	p.waitHealthy()
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(time.Second)
	if p.exited() || status(p.url("/health")) != 200 {
		t.Fatal("the server stopped serving after SIGTERM")
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	if code := p.wait(10 * time.Second); code == 0 {
		t.Errorf("exit %d after SIGKILL", code)
	}
}

func TestFaultHoldMemory(t *testing.T) {
	p := startSim(t, nil, "--tp", "2", "--sim-fault", "hold-memory=2s")
	p.waitHealthy()
	query := []string{"--query-gpu=index,memory.used", "--format=csv,noheader,nounits"}
	if !waitFor(t, 5*time.Second, func() bool { return strings.HasPrefix(p.smi(query...), "0, 8") }) {
		t.Fatalf("memory of a running server:\n%s", p.smi(query...))
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(10 * time.Second)
	// The children are gone, but their memory is still reported...
	if !waitFor(t, 3*time.Second, func() bool { return len(p.liveChildren()) == 0 }) {
		t.Fatal("children did not exit")
	}
	if got := p.smi(query...); !strings.HasPrefix(got, "0, 8") {
		t.Errorf("memory released at once despite hold-memory:\n%s", got)
	}
	// ...until the hold ends.
	if !waitFor(t, 5*time.Second, func() bool { return strings.HasPrefix(p.smi(query...), "0, 2\n1, 2\n") }) {
		t.Errorf("memory still held long after the hold:\n%s", p.smi(query...))
	}
}

func TestFaultOrphanChildren(t *testing.T) {
	p := startSim(t, nil, "--tp", "2", "--sim-fault", "orphan-children")
	p.waitHealthy()
	if !waitFor(t, 5*time.Second, func() bool { return len(p.liveChildren()) == 2 }) {
		t.Fatalf("children: %v, want 2", p.liveChildren())
	}
	// Kill the whole server process group, as the orchestrator's stop does:
	// the orphans are in their own session and survive it.
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(10 * time.Second)
	time.Sleep(300 * time.Millisecond)
	if got := p.liveChildren(); len(got) != 2 {
		t.Errorf("orphans alive after the parent died: %v, want 2", got)
	}
	out := p.smi("--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits")
	if strings.Count(out, "sglang::scheduler_TP") != 2 {
		t.Errorf("nvidia-smi should name the orphans:\n%s", out)
	}
	// Cleanup kills them by pid.
}

func TestAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	p := startSim(t, nil, "--tp", "2", "--port", strconv.Itoa(port))
	if code := p.wait(10 * time.Second); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := "ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', " + strconv.Itoa(port) + "): address already in use"
	log := p.log.String()
	if !strings.Contains(log, want) || !strings.Contains(log, "Address already in use") {
		t.Errorf("log:\n%s", log)
	}
	if len(p.holders()) != 0 {
		t.Error("a server that could not bind started children")
	}
}

func TestChildrenDieWithParent(t *testing.T) {
	p := startSim(t, nil, "--tp", "4")
	p.waitHealthy()
	waitFor(t, 5*time.Second, func() bool { return len(p.liveChildren()) == 4 })
	kids := p.liveChildren()
	if len(kids) != 4 {
		t.Fatalf("children: %v, want 4", kids)
	}
	out := p.smi("--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits")
	for _, k := range kids {
		if !strings.Contains(out, strconv.Itoa(k)+", sglang::scheduler_TP") {
			t.Errorf("child %d missing from nvidia-smi:\n%s", k, out)
		}
	}
	// SIGKILL leaves the parent no chance to clean up: the children must
	// notice on their own.
	p.cmd.Process.Kill()
	p.wait(10 * time.Second)
	if !waitFor(t, 5*time.Second, func() bool { return len(p.liveChildren()) == 0 }) {
		t.Errorf("children outlived a killed parent: %v", p.liveChildren())
	}
	if out := p.smi("--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"); out != "" {
		t.Errorf("compute apps after the server died:\n%s", out)
	}
}
