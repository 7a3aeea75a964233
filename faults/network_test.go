package faults

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// defaultLinkCut is how long a link stays cut: the length of a flaky
// switch port or a VPN renegotiation, and longer than a TCP retransmission
// or two, so the client really sees a dead link. BAKEOFF_FAULT_CUT
// overrides it (a Go duration) for quicker runs while working on the code.
const defaultLinkCut = 30 * time.Second

// sweepInCutLimit bounds how long TestLinkCutDuringSweep keeps the link down
// waiting for the sweep to end on the host: far beyond a sweep that takes
// seconds, and well inside runTimeout and the host's link patience.
const sweepInCutLimit = 3 * time.Minute

func linkCut(t *testing.T) time.Duration {
	if v := os.Getenv("BAKEOFF_FAULT_CUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("BAKEOFF_FAULT_CUT=%q: %v", v, err)
		}
		return d
	}
	return defaultLinkCut
}

// runInBackground starts `bakeoff ARGS` and returns a channel closed when
// it ends and a function that waits and returns its result.
func (r *rig) runInBackground(ctx context.Context, args ...string) (done <-chan struct{}, wait func() result) {
	r.t.Helper()
	cmd, stdout, stderr := r.command(ctx, args...)
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() { cmd.Wait(); close(ch) }()
	return ch, func() result {
		<-ch
		res := result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
		for _, p := range panicMarks {
			if strings.Contains(res.stdout+res.stderr, p) {
				r.t.Fatalf("bakeoff printed %q:\n%s", p, res)
			}
		}
		return res
	}
}

// TestLinkCutWhileLoading cuts the host's link while the first server
// loads and restores it after linkCut: the detached server loads on, and the
// campaign reconnects, finds it ready and goes on.
func TestLinkCutWhileLoading(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := spec{name: "cut-loading", scenarios: []scen{{name: "a"}, {name: "b"}}, healthTimeout: "3m"}
	r.cutLinkAt(s, "a", "ready")
}

// cutLinkAt runs campaign s, cuts the host's link for linkCut as the
// scenario's phase starts, and checks that the run then finishes whole with
// nothing left on the host. It returns the run directory.
func (r *rig) cutLinkAt(s spec, scenario, phase string) string {
	t := r.t
	t.Helper()
	cut := linkCut(t)
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	done, wait := r.runInBackground(ctx, "run", cfg, "--out", out)
	if !waitJournal(ctx, out, done, phaseStarted(scenario, phase)) {
		t.Fatalf("the run ended before %s reached %s: %s", scenario, phase, wait())
	}
	r.host.LinkDown()
	es, _ := orchestrator.ReadJournal(filepath.Join(out, results.JournalFile))
	if n := len(es); n > 0 {
		t.Logf("link down for %s; the journal's last entry: %s %s %s", cut, es[n-1].Scenario, es[n-1].Phase, es[n-1].Event)
	}
	time.Sleep(cut)
	r.host.LinkUp()
	res := wait()
	if res.code != 0 {
		t.Fatalf("want exit 0 after the link came back, got %s", res)
	}
	r.checkEndState(out, s, nil)
	return out
}

// TestLinkCutDuringSweep cuts the link while the sweep runs on the host:
// the sweep finishes there during the cut (it needs no link), and after
// the reconnect its records are fetched whole.
func TestLinkCutDuringSweep(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	cut := linkCut(t)
	// A slower server and more requests for a, so its sweep is still
	// running when the cut comes.
	slow := map[string]any{"sim-speed": 3, "sim-load-time": "3s"}
	s := spec{name: "cut-sweep", scenarios: []scen{{name: "a", args: slow}, {name: "b"}}, requests: 16, healthTimeout: "3m"}
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	done, wait := r.runInBackground(ctx, "run", cfg, "--out", out)
	sweepPid := r.waitHostProcess(ctx, done, isBakeoff("sweep"))
	if sweepPid == 0 {
		t.Fatalf("no sweep ever ran on the host: %s", wait())
	}
	r.host.LinkDown()
	cutAt := time.Now()
	// The link stays down for at least cut and until the sweep has ended
	// on the host, however long a loaded machine makes it take: whether it
	// finishes without a link is the question, not whether it beats a
	// clock. sweepInCutLimit only bounds a sweep that never ends.
	finishedInCut := false
	for time.Since(cutAt) < cut || (!finishedInCut && time.Since(cutAt) < sweepInCutLimit) {
		if !finishedInCut && !r.hostHas(sweepPid) {
			finishedInCut = true
			t.Logf("the sweep (pid %d) finished on the host %.1fs into the cut", sweepPid, time.Since(cutAt).Seconds())
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.host.LinkUp()
	if !finishedInCut {
		t.Errorf("the sweep (pid %d) did not finish on the host within %s of the link going down", sweepPid, sweepInCutLimit)
	}
	res := wait()
	if res.code != 0 {
		t.Fatalf("want exit 0 after the link came back, got %s", res)
	}
	r.checkEndState(out, s, nil)
}

// TestSSHDKilledMidCampaign kills every sshd process on the host (the
// listener and the campaign's own connection) while the second scenario
// sweeps, and starts sshd again a few seconds later: the campaign
// reconnects and finishes every scenario.
func TestSSHDKilledMidCampaign(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := spec{name: "sshd-killed", scenarios: []scen{{name: "a"}, {name: "b"}, {name: "c"}}}
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	done, wait := r.runInBackground(ctx, "run", cfg, "--out", out)
	if !waitJournal(ctx, out, done, phaseStarted("b", "sweep")) {
		t.Fatalf("the run ended before scenario b swept: %s", wait())
	}
	r.host.KillSSHD()
	time.Sleep(sshdDownFor)
	r.host.RestartSSHD()
	res := wait()
	if res.code != 0 {
		t.Fatalf("want exit 0 after sshd came back, got %s", res)
	}
	r.checkEndState(out, s, nil)
}

// sshdDownFor is how long sshd stays dead: a restart by a package upgrade.
const sshdDownFor = 3 * time.Second

// waitHostProcess polls the host's processes (through the namespace, not
// SSH) until one matches, and returns its pid; 0 if the run ended first.
func (r *rig) waitHostProcess(ctx context.Context, done <-chan struct{}, match func(testhost.Process) bool) int {
	for {
		ps, err := r.host.Processes(ctx)
		if err != nil {
			r.t.Fatal(err)
		}
		for _, p := range ps {
			if match(p) {
				return p.Pid
			}
		}
		select {
		case <-done:
			return 0
		case <-ctx.Done():
			return 0
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// isBakeoff matches the bakeoff binary itself running subcommand sub, not
// the shells that launched it (whose scripts mention it too).
func isBakeoff(sub string) func(testhost.Process) bool {
	return func(p testhost.Process) bool {
		f := strings.Fields(p.Cmdline)
		return len(f) > 1 && strings.HasSuffix(f[0], "/bakeoff") && f[1] == sub
	}
}

func (r *rig) hostHas(pid int) bool {
	ps, err := r.host.Processes(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	for _, p := range ps {
		if p.Pid == pid {
			return true
		}
	}
	return false
}

// TestLinkCutBetweenScenarios cuts the link as the first server is torn
// down, and as the second one launches: the phases that signal, launch and
// poll nvidia-smi over SSH in quick succession. Whatever step the cut lands
// in, the campaign must reconnect and finish, with no second server started
// by a retried launch and none left running.
func TestLinkCutBetweenScenarios(t *testing.T) {
	t.Parallel()
	for _, at := range []struct{ scenario, phase string }{{"a", "stop"}, {"b", "launch"}} {
		t.Run(at.scenario+"-"+at.phase, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			s := spec{name: "cut-" + at.phase, scenarios: []scen{{name: "a"}, {name: "b"}}, healthTimeout: "3m"}
			out := r.cutLinkAt(s, at.scenario, at.phase)
			launches := 0
			for _, e := range mustJournal(t, out) {
				if e.Scenario == "b" && e.Phase == "launch" && e.Event == "start" {
					launches++
				}
			}
			if launches != 1 {
				t.Errorf("b's launch started %d times; want once", launches)
			}
		})
	}
}

func mustJournal(t *testing.T, runDir string) []orchestrator.JournalEntry {
	t.Helper()
	es, err := orchestrator.ReadJournal(filepath.Join(runDir, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	return es
}
