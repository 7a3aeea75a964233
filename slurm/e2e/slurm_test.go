package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/slurm"
)

var runsOnRE = regexp.MustCompile(`slurm: job (\d+) runs on (\S+)`)

// jobOf is the job id bakeoff said it got.
func jobOf(t *testing.T, p *proc) string {
	t.Helper()
	m := runsOnRE.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("bakeoff did not say which job it got\n%s", p)
	}
	return m[1]
}

// TestCampaign runs a two-round campaign in an allocation: the job is asked
// for, runs on the node, is recorded in the manifest and the journal, and
// is released at the end.
func TestCampaign(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	cfg := r.write(spec{rounds: 2})
	code, p := r.run("run", cfg)
	if code != 0 {
		t.Fatalf("bakeoff run: exit %d\n%s", code, p)
	}
	id := jobOf(t, p)
	if m := runsOnRE.FindStringSubmatch(p.stderr.String()); m[2] != r.c.Node {
		t.Errorf("job runs on %s, want %s", m[2], r.c.Node)
	}
	if !strings.Contains(p.stderr.String(), "slurm: released job "+id) {
		t.Errorf("bakeoff did not say it released job %s\n%s", id, p)
	}
	runDir := r.runDirOf()
	m := manifest(t, runDir)
	if a := m.Allocation; a == nil || a.System != "slurm" || a.JobID != id || a.Login != r.c.Host.Alias ||
		!slices.Equal(a.Nodes, []string{r.c.Node}) || a.End.IsZero() {
		t.Errorf("manifest allocation %+v, want slurm job %s from %s on [%s] with an end", m.Allocation, id, r.c.Host.Alias, r.c.Node)
	}
	es, err := orchestrator.ReadJournal(filepath.Join(runDir, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(es, func(e orchestrator.JournalEntry) bool {
		return e.Phase == orchestrator.PhaseAllocation && strings.Contains(e.Allocation, "job "+id)
	}) {
		t.Errorf("the journal has no allocation entry for job %s", id)
	}
	run, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Summary.Scenarios) != 4 {
		t.Errorf("%d launches in the summary, want 2 scenarios × 2 rounds", len(run.Summary.Scenarios))
	}
	for _, s := range run.Summary.Scenarios {
		if s.Status != results.StatusOK {
			t.Errorf("%s round %d: %s (%s at %s)", s.Name, s.RoundOf(), s.Status, s.Reason, s.FailedPhase)
		}
	}
	if !strings.Contains(p.stdout.String(), "Results:") {
		t.Errorf("no verdict and results path printed\n%s", p)
	}
	if st := r.jobState(id); st != slurm.StateCancelled {
		t.Errorf("job %s is %q after the campaign, want CANCELLED", id, st)
	}
	r.checkNoJobs()
}

// TestMidSweep stops a campaign in the middle of its first sweep with a
// signal, then checks what that signal must leave: SIGINT stops the server,
// prints the resume command and cancels the job; after SIGKILL the job
// lives on, and --resume reattaches to the same job, finishes the run and
// releases it.
func TestMidSweep(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		sig   syscall.Signal
		check func(t *testing.T, r *rig, p *proc, cfg, runDir, id string)
	}{
		{"interrupt", syscall.SIGINT, checkInterrupted},
		{"kill and resume", syscall.SIGKILL, checkResumed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			cfg := r.write(spec{rounds: 2})
			p := r.start("run", cfg)
			runDir := r.waitRunDir(p)
			r.waitJournal(p, runDir, func(e orchestrator.JournalEntry) bool { return e.Phase == "sweep" && e.Event == "start" })
			id := jobOf(t, p)
			if err := syscall.Kill(p.cmd.Process.Pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			tc.check(t, r, p, cfg, runDir, id)
			r.checkNoJobs()
		})
	}
}

// checkInterrupted: the campaign ends failed with the resume command, and
// its job is cancelled.
func checkInterrupted(t *testing.T, r *rig, p *proc, _, _, id string) {
	t.Helper()
	if code := p.wait(t); code != 1 {
		t.Errorf("exit %d after SIGINT, want 1\n%s", code, p)
	}
	if !strings.Contains(p.stdout.String(), "Resume with: bakeoff run") {
		t.Errorf("no resume command after the interruption\n%s", p)
	}
	if st := r.jobState(id); st != slurm.StateCancelled {
		t.Errorf("job %s is %q after the interruption, want CANCELLED\n%s", id, st, p)
	}
}

// checkResumed: the killed campaign's job runs on, and --resume reattaches
// to it, finishes every launch and releases it.
func checkResumed(t *testing.T, r *rig, p *proc, cfg, runDir, id string) {
	t.Helper()
	<-p.done
	if st := r.jobState(id); st != slurm.StateRunning {
		t.Fatalf("job %s is %q after bakeoff was killed, want RUNNING until its limit", id, st)
	}
	code, p2 := r.run("run", cfg, "--resume", runDir)
	if code != 0 {
		t.Fatalf("bakeoff run --resume: exit %d\n%s", code, p2)
	}
	if !strings.Contains(p2.stderr.String(), "slurm: reattached to job "+id) {
		t.Errorf("the resume did not reattach to job %s\n%s", id, p2)
	}
	if strings.Contains(p2.stderr.String(), "asking") {
		t.Errorf("the resume asked for a new allocation\n%s", p2)
	}
	if a := manifest(t, runDir).Allocation; a == nil || a.JobID != id {
		t.Errorf("manifest allocation %+v after the resume, want job %s", a, id)
	}
	run, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range run.Summary.Scenarios {
		if s.Status != results.StatusOK {
			t.Errorf("%s round %d: %s", s.Name, s.RoundOf(), s.Status)
		}
	}
	if st := r.jobState(id); st != slurm.StateCancelled {
		t.Errorf("job %s is %q after the resumed campaign, want CANCELLED", id, st)
	}
}

// TestInterruptInQueue interrupts a campaign whose job waits for GPUs
// another job holds: the waiting is shown with its reason, and the queued
// job is cancelled.
func TestInterruptInQueue(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	if _, err := r.c.Exec(ctx, "salloc", "--no-shell", "--job-name=holder", "--gres=gpu:4", "--time=5"); err != nil {
		t.Fatal(err)
	}
	cfg := r.write(spec{})
	p := r.start("run", cfg)
	r.waitOutput(p, "PENDING (Resources)")
	m := regexp.MustCompile(`job (\d+) PENDING`).FindStringSubmatch(p.stderr.String())
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 1 {
		t.Errorf("exit %d after SIGTERM in the queue, want 1\n%s", code, p)
	}
	if !strings.Contains(p.stderr.String(), "queued job was cancelled") {
		t.Errorf("bakeoff did not say the queued job was cancelled\n%s", p)
	}
	if st := r.jobState(m[1]); st != slurm.StateCancelled {
		t.Errorf("queued job %s is %q after SIGTERM, want CANCELLED", m[1], st)
	}
	jobs, _ := r.c.Jobs(ctx)
	if len(jobs) != 1 || !strings.Contains(jobs[0], "holder") {
		t.Errorf("jobs %q, want only the holder", jobs)
	}
	for _, j := range jobs {
		r.c.Exec(ctx, "scancel", strings.Fields(j)[0])
	}
}

// TestOutOfTime gives the campaign an allocation shorter than a round's
// estimate: no round is started, the resume command says why, and the job
// is released.
func TestOutOfTime(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	// One minute, less a 10 s margin, against two launches estimated at
	// the campaign's bound on loading and GPU waits (minutes each).
	cfg := r.write(spec{rounds: 2, time: "1", margin: "10s"})
	code, p := r.run("run", cfg)
	if code != 1 {
		t.Errorf("exit %d, want 1 (rounds left out)\n%s", code, p)
	}
	out := p.stdout.String()
	for _, want := range []string{"Out of time: rounds 1, 2 not started (not enough time left in the Slurm allocation",
		"Resume with: bakeoff run", "it asks for a new allocation"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q\n%s", want, p)
		}
	}
	id := jobOf(t, p)
	run, err := results.ReadRun(r.runDirOf())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(run.Summary.Scenarios); n != 0 {
		t.Errorf("%d launches ran, want none", n)
	}
	if st := r.jobState(id); st != slurm.StateCancelled {
		t.Errorf("job %s is %q after the campaign, want CANCELLED", id, st)
	}
	r.checkNoJobs()
}
