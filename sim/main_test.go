package sim

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

var sigterm = syscall.SIGTERM

// simBinary is bakeoff built once for the tests that run the sim as a real
// process, as the orchestrator does.
var simBinary string

func TestMain(m *testing.M) {
	os.Exit(testbin.Main(m, "sim", &simBinary, true))
}

// simProc is a running `bakeoff sim`.
type simProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	log   *testbin.SyncBuffer
	port  int
	state string
	done  chan struct{}
	code  int
}

func freePort(t *testing.T) int { return testbin.FreePort(t) }

// testSpeed and testLoad make a sim load in 50 ms of wall time.
const (
	testSpeed = "100"
	testLoad  = "5s"
)

// startSim runs bakeoff sim with args (a port, speed and load time are added
// unless given) and env, and stops it and its children at cleanup.
func startSim(t *testing.T, env map[string]string, args ...string) *simProc {
	t.Helper()
	p := &simProc{t: t, log: &testbin.SyncBuffer{}, state: t.TempDir(), done: make(chan struct{})}
	joined := " " + strings.Join(args, " ")
	if !strings.Contains(joined, " --port") {
		p.port = freePort(t)
		args = append(args, "--port", strconv.Itoa(p.port))
	}
	if !strings.Contains(joined, "--sim-speed") {
		args = append(args, "--sim-speed", testSpeed)
	}
	if !strings.Contains(joined, "--sim-load-time") {
		args = append(args, "--sim-load-time", testLoad)
	}
	p.cmd = exec.Command(simBinary, append([]string{"sim"}, args...)...)
	p.cmd.Env = append(os.Environ(), gpu.SimStateEnv+"="+p.state)
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	// Its own process group, as the orchestrator launches servers.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *simProc) url(path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path) }

// stop kills the server and every process that registered memory in its
// state dir (its children), by pid.
func (p *simProc) stop() {
	if !p.exited() {
		p.cmd.Process.Kill()
		<-p.done
	}
	// Children found by their unique state dir on the command line, so that
	// one that had not registered yet is not missed.
	for _, pid := range p.children() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, h := range p.holders() {
		if h.PID != os.Getpid() {
			syscall.Kill(h.PID, syscall.SIGKILL)
		}
	}
	waitFor(p.t, 5*time.Second, func() bool { return len(p.liveChildren()) == 0 && len(p.children()) == 0 })
	if p.t.Failed() {
		p.t.Logf("sim log:\n%s", simtest.Tail(p.log.String(), 60))
	}
}

func (p *simProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to exit and returns its status.
func (p *simProc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		p.t.Fatalf("sim still running after %s", d)
		return -1
	}
}

// holders reads every registered holder file, dead or alive.
func (p *simProc) holders() []gpu.Holder {
	var out []gpu.Holder
	files, _ := filepath.Glob(filepath.Join(p.state, gpu.HolderPrefix+"*.json"))
	for _, f := range files {
		pid, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), gpu.HolderPrefix), ".json"))
		out = append(out, gpu.Holder{PID: pid})
	}
	return out
}

// children are the running processes whose command line names this sim's
// state dir (Linux /proc; elsewhere none are found this way).
func (p *simProc) children() []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(b, []byte("\x00"+p.state+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if pid != p.cmd.Process.Pid && gpu.PIDAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// liveChildren are the registered pids still running.
func (p *simProc) liveChildren() []int {
	var out []int
	for _, h := range p.holders() {
		if gpu.PIDAlive(h.PID) {
			out = append(out, h.PID)
		}
	}
	return out
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

func status(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitHealthy waits until /health answers 200.
func (p *simProc) waitHealthy() {
	p.t.Helper()
	if !waitFor(p.t, 20*time.Second, func() bool { return p.exited() || status(p.url("/health")) == 200 }) || p.exited() {
		p.t.Fatalf("sim never turned healthy (exited=%v)", p.exited())
	}
}

// smi runs the fake nvidia-smi against the sim's state dir.
func (p *simProc) smi(args ...string) string {
	p.t.Helper()
	cmd := exec.Command(simBinary, append([]string{"sim", "nvidia-smi"}, args...)...)
	cmd.Env = append(os.Environ(), gpu.SimStateEnv+"="+p.state, gpu.SimGPUsEnv+"=8")
	out, err := cmd.Output()
	if err != nil {
		p.t.Fatalf("nvidia-smi %v: %v", args, err)
	}
	return string(out)
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
