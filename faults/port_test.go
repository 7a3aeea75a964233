package faults

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/results"
)

// TestPortTakenByOldServer leaves a server the campaign does not know about
// (no pid file: started by hand, or by another tool) listening on the
// engine port. The next launch cannot bind it; what matters is that the
// campaign never measures the old server in its place: the scenario must
// fail, saying why, and not come out ok.
func TestPortTakenByOldServer(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	old := r.startForeignServer(defaultPort)
	s := spec{name: "port-taken", scenarios: []scen{{name: "next"}}}
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	res := r.bakeoff("run", cfg, "--out", out)
	if res.code != 1 {
		t.Fatalf("want exit 1 (the scenario failed), got %s", res)
	}
	if !processRunning(old.Process.Pid) {
		t.Errorf("the foreign server (pid %d) was killed; it was not the campaign's", old.Process.Pid)
	}
	stopForeign(old)
	r.checkEndState(out, s, map[string]outcome{
		"next": {status: results.StatusFailed, reason: "in use"},
	})
}

// startForeignServer starts a sim on port inside the host, outside any
// campaign, with its own GPU state so only the port is in the way. It waits
// until the port listens.
func (r *rig) startForeignServer(port int) *exec.Cmd {
	r.t.Helper()
	state := r.t.TempDir()
	cmd := exec.Command("ip", "netns", "exec", r.host.Name, bakeoffBin, "sim",
		"--model-path", "/models/old-server", "--port", strconv.Itoa(port),
		"--sim-speed", simSpeed, "--sim-load-time", "1s")
	cmd.Env = append(os.Environ(), "BAKEOFF_SIM_STATE="+state)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { stopForeign(cmd) })
	deadline := time.Now().Add(settleTimeout)
	for time.Now().Before(deadline) {
		out, _ := r.host.Exec(context.Background(), "ss", "-Hltn", "sport = :"+strconv.Itoa(port))
		if strings.Contains(string(out), ":"+strconv.Itoa(port)) {
			return cmd
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("the foreign server did not listen on %d within %s", port, settleTimeout)
	return nil
}

func stopForeign(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_, _ = cmd.Process.Wait()
}

func processRunning(pid int) bool { return syscall.Kill(pid, 0) == nil }
