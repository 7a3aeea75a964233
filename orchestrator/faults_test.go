package orchestrator_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestCrashOnFirstRequest: a server that passes health and dies on its first
// real request fails at smoke with the traceback in its reason; the other
// scenarios complete and the CLI exits 1.
func TestCrashOnFirstRequest(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.scenario("b", "a", "sim-fault: crash-on-first-request")
	w.scenario("c", "a", "speculative-algorithm: EAGLE3", "speculative-eagle-topk: 1",
		"speculative-num-steps: 3", "speculative-num-draft-tokens: 4")
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b", "c"}})
	dir := filepath.Join(w.root, "run")
	cmd := w.bakeoff("run", w.config, "--out", dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, out)
	}
	run := readSummary(t, dir)
	b := scenarioResult(t, run, "b")
	if b.Status != results.StatusFailed || b.FailedPhase != "smoke" {
		t.Fatalf("b: status %s at %q, want failed at smoke: %s", b.Status, b.FailedPhase, b.Reason)
	}
	if !strings.Contains(b.Reason, "Traceback (most recent call last)") {
		t.Errorf("b's reason has no traceback:\n%s", b.Reason)
	}
	if first, _, _ := strings.Cut(b.Reason, "\n"); !strings.Contains(first, "AttributeError: 'EAGLEWorkerV2'") {
		t.Errorf("b's reason does not begin with the exception: %q", first)
	}
	for _, n := range []string{"a", "c"} {
		if s := scenarioResult(t, run, n); s.Status != results.StatusOK {
			t.Errorf("%s: %s (%s), want ok", n, s.Status, s.Reason)
		}
	}
	if !strings.Contains(string(out), "FAILED b at smoke") {
		t.Errorf("the CLI did not report the failure:\n%s", out)
	}
}

// TestHangDuringLoad: health never turns 200, so the health timeout ends
// the wait, with the log tail.
func TestHangDuringLoad(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "", "sim-fault: hang-during-load")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, healthTimeout: "3s"})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results[0]
	if r.Status != results.StatusFailed || r.FailedPhase != "ready" || !strings.Contains(r.Reason, "not healthy after 3s") {
		t.Fatalf("got %s at %q: %s", r.Status, r.FailedPhase, r.Reason)
	}
	if strings.TrimSpace(r.LogExcerpt) == "" {
		t.Errorf("no log tail in the failure")
	}
}

// TestDieDuringLoad: a server that exits while loading fails at once, long
// before the health timeout.
func TestDieDuringLoad(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "", "sim-fault: die-during-load")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, healthTimeout: "10m"})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results[0]
	if r.Status != results.StatusFailed || r.FailedPhase != "ready" {
		t.Fatalf("got %s at %q: %s", r.Status, r.FailedPhase, r.Reason)
	}
	// The root cause, not the "Initialization failed" that follows it.
	if first, _, _ := strings.Cut(r.Reason, "\n"); !strings.Contains(first, "DistBackendError: NCCL error") {
		t.Errorf("the reason does not begin with the exception: %q", first)
	}
	// Generous: the point is "not at the 10-minute timeout".
	if s := r.PhaseSeconds["ready"]; s > 120 {
		t.Errorf("ready took %.0fs; a dead server must fail fast", s)
	}
	if strings.TrimSpace(r.LogExcerpt) == "" {
		t.Errorf("no log tail in the failure")
	}
}

// TestGPUHeldAfterStop: scheduler processes that escape the server's
// process group (setsid) are stopped with the server, since its process
// tree is taken while it lives; the next scenario launches on free GPUs
// without kill_strays.
func TestGPUHeldAfterStop(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "", "sim-fault: orphan-children")
	w.scenario("b", "a", "sim-fault: null")
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, gpuWait: "5s"})
	t.Cleanup(func() { killHolders(t, w) })
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Results {
		if r.Status != results.StatusOK {
			t.Fatalf("%s: %s at %s: %s", r.Name, r.Status, r.FailedPhase, r.Reason)
		}
	}
	if left := w.leftovers(); len(left) > 0 {
		t.Errorf("escaped schedulers still hold memory: pids %v", left)
	}
}

// TestGPUHeldByStranger: a process the campaign did not start holds GPU
// memory. Without kill_strays the scenario refuses to launch and names the
// holder; with it, the holder is killed and the scenario runs.
func TestGPUHeldByStranger(t *testing.T) {
	for _, kill := range []bool{false, true} {
		name := "refuse"
		if kill {
			name = "kill-strays"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.scenario("a", "")
			w.writeConfig(campaignOpts{scenarios: []string{"a"}, gpuWait: "2s", killStrays: kill})
			// A stranger on another port, registered in the same fake GPUs.
			stray := w.bakeoff("sim", "--sim-speed", "200", "--sim-load-time", "1s", "--model-path", "/m", "--tp", "1",
				"--host", "127.0.0.1", "--port", itoa(freePort(t)))
			if err := stray.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stray.Process.Kill(); stray.Wait() }()
			t.Cleanup(func() { killHolders(t, w) })
			waitFor(t, "the stranger to hold memory", func() bool { return len(w.leftovers()) > 0 })
			out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a := out.Results[0]
			if kill {
				if a.Status != results.StatusOK {
					t.Fatalf("a: %s at %s: %s", a.Status, a.FailedPhase, a.Reason)
				}
				return
			}
			if a.Status != results.StatusFailed || a.FailedPhase != "gpu-free" {
				t.Fatalf("a: %s at %q: %s", a.Status, a.FailedPhase, a.Reason)
			}
			if !strings.Contains(a.Reason, "held by pid") || !strings.Contains(a.Reason, "scheduler") {
				t.Errorf("the reason does not name the holder: %s", a.Reason)
			}
		})
	}
}

// killHolders kills the orphaned schedulers a test made on purpose, by the
// pids the fake nvidia-smi reports.
func killHolders(t *testing.T, w *world) {
	for _, pid := range w.leftovers() {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
	// A killed orphan is gone once init reaps it, a moment later.
	waitFor(t, "the killed schedulers to disappear", func() bool { return len(w.leftovers()) == 0 })
}

// TestCrashDuringSweep: a server that dies in the middle of the sweep fails
// the scenario at the sweep, with its log, and the measured part is kept.
func TestCrashDuringSweep(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "", "sim-fault: crash-after=6")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results[0]
	if r.Status != results.StatusFailed || r.FailedPhase != "sweep" {
		t.Fatalf("got %s at %q: %s", r.Status, r.FailedPhase, r.Reason)
	}
	if first, _, _ := strings.Cut(r.Reason, "\n"); !strings.Contains(first, "RuntimeError: CUDA error: an illegal memory access") {
		t.Errorf("the reason does not begin with the exception: %q", first)
	}
	if strings.TrimSpace(r.LogExcerpt) == "" {
		t.Errorf("no log tail in the failure")
	}
	if _, err := os.Stat(filepath.Join(out.RunDir, "a", "round-1", results.RequestsFile)); err != nil {
		t.Errorf("the records measured before the crash were not kept: %v", err)
	}
}

// TestKeepServer: --keep-server leaves the last server running (and says
// where its pid file is, user-only like the workdir); the test then stops it
// as a user would.
func TestKeepServer(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}})
	out, events, err := w.runInProcess(context.Background(), orchestrator.Options{KeepServer: true})
	if err != nil || out.Failed > 0 {
		t.Fatalf("%v %+v", err, out)
	}
	workdir := filepath.Join(w.root, "tmp", "bakeoff-local-"+itoa(os.Getuid()))
	pidFile := filepath.Join(workdir, "server.pid")
	// The workdir bakeoff created and the pid file it left are user-only:
	// they name the host's paths.
	for _, f := range []struct {
		path string
		want os.FileMode
	}{{workdir, os.ModeDir | 0o700}, {pidFile, 0o600}} {
		if fi, err := os.Stat(f.path); err != nil {
			t.Error(err)
		} else if got := fi.Mode() & (os.ModeDir | os.ModePerm); got != f.want {
			t.Errorf("%s: mode %v, want %v", f.path, got, f.want)
		}
	}
	h := remote.NewLocal()
	alive, err := remote.Alive(context.Background(), h, pidFile)
	if err != nil || !alive {
		t.Fatalf("the server is not running after --keep-server (%v)", err)
	}
	said := false
	for _, e := range events {
		said = said || (e.Kind == orchestrator.EventWarning && strings.Contains(e.Message, "--keep-server"))
	}
	if !said {
		t.Errorf("no event says the server was left running")
	}
	if err := remote.Stop(context.Background(), h, pidFile, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestPortTakenByStranger: a server no pid file names holds the engine
// port. It is not the campaign's to kill, and it must never be measured in
// the scenario's place: the launch refuses, and the stranger keeps running.
func TestPortTakenByStranger(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, healthTimeout: "10m"})
	stray := w.bakeoff("sim", "--sim-speed", "200", "--sim-load-time", "1s", "--model-path", "/m", "--tp", "1",
		"--host", "127.0.0.1", "--port", itoa(w.port))
	stray.Env = append(w.env, "BAKEOFF_SIM_STATE="+t.TempDir())
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stray.Process.Kill(); stray.Wait() }()
	waitFor(t, "the stranger to listen", func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+itoa(w.port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results[0]
	if r.Status != results.StatusFailed || r.FailedPhase != "launch" || !strings.Contains(r.Reason, "already in use") {
		t.Fatalf("a: %s at %q: %s", r.Status, r.FailedPhase, r.Reason)
	}
	if err := stray.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the stranger was killed: %v", err)
	}
}
