package orchestrator_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// waitFor polls cond until it holds; the limit only stops a broken test
// from hanging, it is not a timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func journalHas(dir string, match func(orchestrator.JournalEntry) bool) bool {
	entries, err := orchestrator.ReadJournal(filepath.Join(dir, results.JournalFile))
	if err != nil {
		return false
	}
	for _, e := range entries {
		if match(e) {
			return true
		}
	}
	return false
}

// startRun starts `bakeoff run CONFIG --out dir` in the background and
// waits until the journal shows phase starting (for scenario, or any one
// when scenario is ""). Its output goes to the returned buffer, to read
// once it has been waited for.
func (w *world) startRun(t *testing.T, dir, scenario, phase string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := w.bakeoff("run", w.config, "--out", dir)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, phase+" to start", func() bool {
		return journalHas(dir, func(e orchestrator.JournalEntry) bool {
			return (scenario == "" || e.Scenario == scenario) && e.Phase == phase && e.Event == "start"
		})
	})
	return cmd, &log
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// TestKillAndResume: SIGKILL the orchestrator in the middle of a scenario's
// sweep; --resume then finishes the campaign, every scenario completes
// exactly once, the finished one's files are untouched and no process of the
// killed run is left behind.
func TestKillAndResume(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.scenario("b", "a", "speculative-algorithm: EAGLE3", "speculative-eagle-topk: 4",
		"speculative-num-steps: 3", "speculative-num-draft-tokens: 8")
	w.scenario("c", "a", "cuda-graph-max-bs: 64")
	// Slow enough that b's sweep is still running when the kill lands.
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b", "c"}, speed: 20, requests: 12, maxTokens: 64})
	dir := filepath.Join(w.root, "run")
	first, log := w.startRun(t, dir, "b", "sweep")
	time.Sleep(300 * time.Millisecond) // into the sweep, not at its first line
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	aRecords := fileHash(t, filepath.Join(dir, "a", "round-1", results.RequestsFile))
	if len(w.leftovers()) == 0 {
		t.Log("note: b's server was already gone at the kill")
	}

	second := w.bakeoff("run", w.config, "--resume", dir)
	out, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\nfirst run:\n%s\nresume:\n%s", err, log.String(), out)
	}
	entries := journal(t, dir)
	ends := scenarioEnds(entries)
	for _, n := range []string{"a", "b", "c"} {
		if ends[n+":ok"] != 1 {
			t.Errorf("%s completed %d times, want once (journal ends %v)", n, ends[n+":ok"], ends)
		}
	}
	starts := map[string]int{}
	for _, e := range entries {
		if e.Phase == orchestrator.PhaseScenario && e.Event == "start" {
			starts[e.Scenario]++
		}
	}
	if starts["a"] != 1 || starts["b"] != 2 || starts["c"] != 1 {
		t.Errorf("scenario starts %v, want a once, b twice (killed, resumed), c once", starts)
	}
	if fileHash(t, filepath.Join(dir, "a", "round-1", results.RequestsFile)) != aRecords {
		t.Errorf("a's records changed during the resume")
	}
	run := readSummary(t, dir)
	for _, n := range []string{"a", "b", "c"} {
		if s := scenarioResult(t, run, n); s.Status != results.StatusOK {
			t.Errorf("%s: %s", n, s.Status)
		}
	}
	if b := scenarioResult(t, run, "b"); b.Attempt != 2 {
		t.Errorf("b: attempt %d, want 2", b.Attempt)
	}
	if !strings.Contains(string(out), "already ok in this run, skipped") {
		t.Errorf("the resume did not say it skipped a:\n%s", out)
	}
}

// TestTwoCampaignsOneHost: while one campaign holds the host, a second one
// refuses and names the holder; a lock left by a dead orchestrator is taken
// over.
func TestTwoCampaignsOneHost(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, speed: 20, requests: 12, maxTokens: 64})
	first, log := w.startRun(t, filepath.Join(w.root, "run1"), "", "launch")
	defer first.Wait()
	out, err := w.bakeoff("run", w.config, "--out", filepath.Join(w.root, "run2")).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second campaign: %v, want exit 1\n%s", err, out)
	}
	want := []string{"busy", "pid " + itoa(first.Process.Pid), `campaign "e2e"`}
	for _, s := range want {
		if !strings.Contains(string(out), s) {
			t.Errorf("refusal does not say %q:\n%s", s, out)
		}
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first campaign: %v\n%s", err, log.String())
	}

	// A stale lock: its holder (a process that has exited) is gone.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	lock := filepath.Join(w.root, "tmp", "bakeoff-local-"+itoa(os.Getuid()), orchestrator.LockFile)
	stale := `{"machine":"` + host + `","pid":` + itoa(dead.Process.Pid) + `,"started":"2026-01-01T00:00:00Z","campaign":"old","run_dir":"x"}`
	if err := os.WriteFile(lock, []byte(stale+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := w.bakeoff("run", w.config, "--out", filepath.Join(w.root, "run3")).CombinedOutput(); err != nil {
		t.Fatalf("a stale lock was not taken over: %v\n%s", err, out)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestOnlyRerunMerges: --only b --resume reruns b into the existing run; the
// first attempt moves to b/history/1 and the summary shows attempt 2.
func TestOnlyRerunMerges(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.scenario("b", "a", "cuda-graph-max-bs: 64")
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil || out.Failed > 0 {
		t.Fatalf("first run: %v, %+v", err, out)
	}
	dir := out.RunDir
	aBefore := fileHash(t, filepath.Join(dir, "a", "round-1", results.RequestsFile))
	bBefore := fileHash(t, filepath.Join(dir, "b", "round-1", results.RequestsFile))

	out2, _, err := w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: dir, Only: []string{"b"}})
	if err != nil || out2.Failed > 0 {
		t.Fatalf("rerun: %v, %+v", err, out2)
	}
	if len(out2.Results) != 1 || out2.Results[0].Name != "b" {
		t.Fatalf("rerun ran %+v, want only b", out2.Results)
	}
	run := readSummary(t, dir)
	if b := scenarioResult(t, run, "b"); b.Attempt != 2 || b.Status != results.StatusOK {
		t.Errorf("b: attempt %d %s, want attempt 2 ok", b.Attempt, b.Status)
	}
	if a := scenarioResult(t, run, "a"); a.Attempt != 1 {
		t.Errorf("a: attempt %d, want 1", a.Attempt)
	}
	if fileHash(t, filepath.Join(dir, "b", "round-1", "history", "1", results.RequestsFile)) != bBefore {
		t.Errorf("b's first attempt was not kept in history/1")
	}
	if fileHash(t, filepath.Join(dir, "a", "round-1", results.RequestsFile)) != aBefore {
		t.Errorf("a changed")
	}
	if len(run.Summary.Scenarios) != 2 || run.Summary.Scenarios[0].Name != "a" {
		t.Errorf("summary order: %+v", run.Summary.Scenarios)
	}

	// A rerun that fails keeps the earlier complete attempt as the one the
	// verdict, `bakeoff report` and `bakeoff diff` take b's figures from,
	// and says plainly that the newest attempt failed.
	w.scenario("b", "a", "cuda-graph-max-bs: 64", "sim-fault: crash-on-first-request")
	out3, _, err := w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: dir, Only: []string{"b"}})
	if err != nil || out3.Failed != 1 {
		t.Fatalf("failing rerun: %v, %+v", err, out3)
	}
	run = readSummary(t, dir)
	b := scenarioResult(t, run, "b")
	if b.Attempt != 3 || b.Status != results.StatusFailed || b.FailedPhase != "smoke" || b.Dir != "b/round-1" {
		t.Fatalf("b: attempt %d %s at %q in %q, want attempt 3 failed at smoke in b/round-1", b.Attempt, b.Status, b.FailedPhase, b.Dir)
	}
	var hist []string
	for _, h := range b.History {
		hist = append(hist, fmt.Sprintf("%d %s %s", h.Attempt, h.Status, h.Dir))
	}
	if want := []string{"1 ok b/round-1/history/1", "2 ok b/round-1/history/2"}; !slices.Equal(hist, want) {
		t.Errorf("b's history %q, want %q", hist, want)
	}
	if c := b.Complete(); c == nil || c.Attempt != 2 || run.ScenarioDir("b") != filepath.Join(dir, "b", "round-1", "history", "2") {
		t.Errorf("newest complete attempt %+v in %s, want attempt 2 in b/round-1/history/2", c, run.ScenarioDir("b"))
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	vb := v.Scenario("b")
	if vb.Status != results.StatusOK || vb.Attempt != 2 || len(vb.Levels) == 0 || vb.Newest == nil ||
		vb.Newest.Attempt != 3 || vb.Newest.FailedPhase != "smoke" {
		t.Errorf("verdict of b: %s attempt %d, %d levels, newest %+v; want attempt 2's figures, newest 3 failed at smoke",
			vb.Status, vb.Attempt, len(vb.Levels), vb.Newest)
	}
	rep, err := w.bakeoff("report", dir, "--format", "text", "--detail").CombinedOutput()
	if err != nil {
		t.Fatalf("bakeoff report: %v\n%s", err, rep)
	}
	for _, want := range []string{"b: the newest attempt (3) failed in phase smoke",
		"the figures are from attempt 2, the newest that completed (b/round-1/history/2)"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("bakeoff report does not say %q:\n%s", want, rep)
		}
	}
	if d, err := w.bakeoff("diff", dir, dir).CombinedOutput(); err != nil || strings.Contains(string(d), "no measurements") {
		t.Errorf("bakeoff diff of the run with itself: %v\n%s", err, d)
	}
}

// TestResumeRefusesChangedSweep: a resume whose sweep differs is refused,
// naming the difference.
func TestResumeRefusesChangedSweep(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, maxTokens: 48})
	_, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: out.RunDir})
	var fp *orchestrator.FingerprintChangedError
	if !errors.As(err, &fp) {
		t.Fatalf("got %v, want a FingerprintChangedError", err)
	}
	if !strings.Contains(err.Error(), "max_tokens: 32 → 48") {
		t.Errorf("the refusal does not show the difference:\n%v", err)
	}
}

// TestInterruptThenResume: the first Ctrl-C stops the current server, keeps
// what was measured, journals the scenario as canceled and prints the resume
// command; resuming then finishes the campaign.
func TestInterruptThenResume(t *testing.T) {
	var (
		w     *world
		dir   string
		first *exec.Cmd
		log   *bytes.Buffer
		err   error
	)
	// The interrupt is sent once a's sweep has started, to land in it. A
	// machine busy enough to hold this process back for the whole sweep
	// lets a finish first: that run is not the case under test, so the
	// campaign is run afresh. A bakeoff that does not stop on SIGINT lets
	// a finish every time, and fails.
	const attempts = 3
	aDone := func(e orchestrator.JournalEntry) bool {
		return e.Scenario == "a" && e.Phase == orchestrator.PhaseScenario && e.Outcome == orchestrator.OutcomeOK
	}
	for attempt := 1; ; attempt++ {
		w = newWorld(t)
		w.scenario("a", "")
		w.scenario("b", "a", "cuda-graph-max-bs: 64")
		w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, speed: 20, requests: 12, maxTokens: 64})
		dir = filepath.Join(w.root, "run")
		first, log = w.startRun(t, dir, "a", "sweep")
		if err := first.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err = first.Wait()
		if !journalHas(dir, aDone) {
			break
		}
		if attempt == attempts {
			t.Fatalf("a finished despite the interrupt sent in its sweep, %d times out of %d\n%s", attempts, attempts, log.String())
		}
		t.Logf("attempt %d: a finished before the interrupt landed; running the campaign again", attempt)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("interrupted run: %v, want exit 1\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "Resume with: bakeoff run") {
		t.Errorf("no resume command printed:\n%s", log.String())
	}
	if left := w.leftovers(); len(left) > 0 {
		t.Errorf("processes left after the graceful stop: %v", left)
	}
	if !journalHas(dir, func(e orchestrator.JournalEntry) bool {
		return e.Scenario == "a" && e.Phase == orchestrator.PhaseScenario && e.Outcome == orchestrator.OutcomeCanceled
	}) {
		t.Errorf("the journal does not show a as canceled")
	}
	if out, err := w.bakeoff("run", w.config, "--resume", dir).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	run := readSummary(t, dir)
	for _, n := range []string{"a", "b"} {
		if s := scenarioResult(t, run, n); s.Status != results.StatusOK {
			t.Errorf("%s: %s after the resume", n, s.Status)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "round-1", "history", "1")); err != nil {
		t.Errorf("the interrupted attempt of a was not kept: %v", err)
	}
}

// TestResumeFingerprintForms: the request count is not part of the
// comparison, so a resume with other requests is accepted; a run written
// with the legacy fingerprint (which held the count) resumes under the
// same sweep, keeps its fingerprint, and is refused when the count changed.
func TestResumeFingerprintForms(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, requests: 12})
	if _, _, err := w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: out.RunDir}); err != nil {
		t.Fatalf("resume with other requests: %v", err)
	}

	// Rewrite the run as one written with the legacy fingerprint.
	w.writeConfig(campaignOpts{scenarios: []string{"a"}})
	c, err := campaign.Load(w.config)
	if err != nil {
		t.Fatal(err)
	}
	legacy := campaign.LegacyFingerprint(c.Sweep, c.PromptHash)
	run, err := results.ReadRun(out.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	run.Manifest.Fingerprint, run.Summary.Fingerprint = legacy, legacy
	for i := range run.Summary.Scenarios {
		run.Summary.Scenarios[i].Fingerprint = legacy
	}
	if err := results.WriteJSONAtomic(filepath.Join(out.RunDir, results.ManifestFile), run.Manifest); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteJSONAtomic(filepath.Join(out.RunDir, results.SummaryFile), run.Summary); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: out.RunDir}); err != nil {
		t.Fatalf("resume of a legacy run under its own sweep: %v", err)
	}
	if run, err = results.ReadRun(out.RunDir); err != nil || run.Manifest.Fingerprint != legacy {
		t.Fatalf("the legacy run's fingerprint is now %s (%v), want %s kept", run.Manifest.Fingerprint, err, legacy)
	}
	w.writeConfig(campaignOpts{scenarios: []string{"a"}, requests: 12})
	_, _, err = w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: out.RunDir})
	var fp *orchestrator.FingerprintChangedError
	if !errors.As(err, &fp) {
		t.Fatalf("resume of a legacy run with other requests: got %v, want a FingerprintChangedError", err)
	}
}
