// Package campaigntest is what the campaign suites (faults, soak, the Slurm
// end-to-end tests) share to run whole campaigns as a user does: a gate on
// the suite's environment variable, a campaign folder and the environment
// bakeoff runs in, the real binary started in its own process group, and
// the waits on what a running campaign does and on what it leaves behind.
// Each suite renders its own campaigns; how they are run is the same.
package campaigntest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Need skips t unless the environment variable env is set. The campaign
// suites take minutes, so `make test` leaves them out and their own make
// targets switch them on; what names the suite and how says which target
// does ("make faults; .ci/run does").
func Need(t testing.TB, env, what, how string) {
	t.Helper()
	if os.Getenv(env) == "" {
		t.Skipf("%s run with %s=1 (%s)", what, env, how)
	}
}

// NewDir makes a campaign's folder: a temporary directory holding configs/
// and scenarios/, where `bakeoff run` is started and results/ lands.
func NewDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"configs", "scenarios"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Env is the environment bakeoff runs in: HOME holding the hosts' aliases
// and known_hosts entries, this PATH, a TMPDIR of the test's own and the C
// locale, so that nothing of the machine's own user leaks in; extra follows.
func Env(t testing.TB, home string, extra ...string) []string {
	t.Helper()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), "LANG=C"}
	return append(env, extra...)
}

// WriteYAML writes doc as YAML to dir/rel and returns the file's path.
func WriteYAML(t testing.TB, dir, rel string, doc any) string {
	t.Helper()
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, rel)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// InGroup starts cmd in a process group of its own and, when its context
// ends, kills the whole group: a hung campaign then takes nothing it
// started on this machine (ssh clients, local sims) past the test. It
// returns cmd.
func InGroup(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// ExitCode is the exit status that cmd.Run's or cmd.Wait's err stands
// for. exited is false when the process did not exit by itself (a signal
// killed it, or it never started): then there is no status to check.
func ExitCode(err error) (code int, exited bool) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode(), true
	default:
		return -1, false
	}
}

// Until polls cond every interval until it holds, and says whether it did:
// false when done closes (the process being watched ended) or ctx ends
// first. A nil done never closes.
func Until(ctx context.Context, done <-chan struct{}, every time.Duration, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-done:
			return false
		case <-ctx.Done():
			return false
		case <-time.After(every):
		}
	}
}

// JournalHas says whether the journal of the run in runDir holds an entry
// pred accepts; a journal not written yet holds none.
func JournalHas(runDir string, pred func(orchestrator.JournalEntry) bool) bool {
	es, _ := orchestrator.ReadJournal(filepath.Join(runDir, results.JournalFile))
	return slices.ContainsFunc(es, pred)
}

// WaitJournal polls the journal of the run in runDir until pred holds for
// an entry, or done closes or ctx ends first. It returns whether pred held.
func WaitJournal(ctx context.Context, runDir string, done <-chan struct{}, pred func(orchestrator.JournalEntry) bool) bool {
	return Until(ctx, done, 20*time.Millisecond, func() bool { return JournalHas(runDir, pred) })
}

// CheckNothingLeft waits up to settle for h to hold no process but sshd
// and those spare accepts (nil spares none), and fails t naming what is
// left. A campaign stops its servers and sweeps before it ends, so anything
// still there after settle was left behind. where names h in the failure
// ("host", "node").
func CheckNothingLeft(t testing.TB, h *testhost.Host, settle time.Duration, where string, spare func(testhost.Process) bool) {
	t.Helper()
	var left []testhost.Process
	var err error
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	gone := Until(ctx, nil, 100*time.Millisecond, func() bool {
		var ps []testhost.Process
		ps, err = h.Processes(context.Background())
		if err != nil {
			return true
		}
		left = left[:0]
		for _, p := range ps {
			if spare == nil || !spare(p) {
				left = append(left, p)
			}
		}
		return len(left) == 0
	})
	switch {
	case err != nil:
		t.Fatal(err)
	case !gone:
		t.Errorf("processes left on the %s after the campaign: %+v", where, left)
	}
}
