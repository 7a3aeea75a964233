package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/llamatest"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// llamaPreflightScenarios are two llama.cpp scenarios, the second with
// the flags written in body; the stand-in llama-server (llamatest) prints
// a real llama-server's --help, so the preflight reads what a real build
// accepts.
func llamaPreflightScenarios(w *world, last string) {
	w.t.Helper()
	writeLlamaCampaign(w.t, w, map[string]string{
		"a": fmt.Sprintf("engine: llamacpp\nmodel: /models/q.gguf\nenv:\n  %s: \"1\"\nargs:\n  parallel: 4\n", llamatest.Env),
		"b": "extends: a\n" + last,
	}, "a", []string{"a", "b"})
}

// TestPreflightStopsBeforeLaunch: an unknown flag, a removed one and a
// value outside the listed choices, in the last scenario of a campaign,
// stop `bakeoff run` before its first launch: exit 2, each flag named at
// its file:line:col with the closest spelling the engine accepts, no
// server started, no requests recorded.
func TestPreflightStopsBeforeLaunch(t *testing.T) {
	w := newWorld(t)
	llamaPreflightScenarios(w, "args:\n  draft-max: 8\n  ctxsize: 4096\n  flash-attn: maybe\n")
	run := filepath.Join(w.root, "run")
	out, err := w.bakeoff("run", w.config, "--out", run).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2\n%s", err, out)
	}
	b := filepath.Join(w.scenDir, "b.yaml")
	for _, want := range []string{
		b + ":3:3: scenario b: --draft-max has been removed; use --spec-draft-n-max or --spec-ngram-mod-n-max (llama.cpp llama-server b0000-llamatest)",
		b + ":4:3: scenario b: unknown flag --ctxsize; the closest it accepts is --ctx-size",
		b + ":5:3: scenario b: invalid choice for --flash-attn: \"maybe\" (choose from on, off, auto)",
		"nothing was launched",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run's output does not say %q:\n%s", want, out)
		}
	}
	checkNothingLaunched(t, run)
	// validate --host finds the same, and says so the same way.
	out, err = w.bakeoff("validate", w.config, "--host").CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), b+":3:3: scenario b: --draft-max has been removed") {
		t.Errorf("validate --host: %v\n%s", err, out)
	}
}

// checkNothingLaunched fails unless the run's journal shows no step past
// the host's start and no scenario left a request.
func checkNothingLaunched(t *testing.T, run string) {
	t.Helper()
	entries, err := orchestrator.ReadJournal(filepath.Join(run, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch orchestrator.StepName(e.Phase) {
		case orchestrator.StepLock, orchestrator.StepPrepare, orchestrator.StepPreflight:
		default:
			t.Errorf("journal: %+v after a failed preflight", e)
		}
	}
	found, _ := filepath.Glob(filepath.Join(run, "*", "*", results.RequestsFile))
	if len(found) > 0 {
		t.Errorf("requests recorded: %v", found)
	}
}

// TestPreflightDeprecatedWarns: a deprecated alias is a warning at its
// file:line:col, and the campaign runs; the manifest keeps the build's
// help hash.
func TestPreflightDeprecatedWarns(t *testing.T) {
	w := newWorld(t)
	llamaPreflightScenarios(w, "args:\n  defrag-thold: 0.1\n")
	out, events, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed > 0 {
		t.Fatalf("%d launches failed: %+v", out.Failed, out.Results)
	}
	want := filepath.Join(w.scenDir, "b.yaml") + ":3:3: scenario b: --defrag-thold is deprecated"
	warned := false
	for _, e := range events {
		warned = warned || e.Kind == orchestrator.EventWarning && strings.HasPrefix(e.Message, want)
	}
	if !warned {
		t.Errorf("no warning %q among the events", want)
	}
	run, err := results.ReadRun(out.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	man := run.Manifest
	// The version is the stand-in's --version, as its /props build_info says it.
	if len(man.Engines) != 1 || man.Engines[0].Engine != "llamacpp" || !strings.HasPrefix(man.Engines[0].HelpHash, "sha256:") ||
		man.Engines[0].Version != "b0000-llamatest" ||
		strings.Join(man.Engines[0].Scenarios, ",") != "a,b" {
		t.Errorf("manifest engines %+v", man.Engines)
	}
}

// TestPreflightHelpFails: a help command that cannot run (the engine is not
// installed) stops the campaign before any launch, naming the host and the
// command.
func TestPreflightHelpFails(t *testing.T) {
	w := newWorld(t)
	llamaPreflightScenarios(w, "")
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	missing := filepath.Join(w.root, "bin", "llama-server-not-installed")
	if err := os.WriteFile(w.config, []byte(strings.Replace(string(cfg), fmt.Sprintf("%q", self), fmt.Sprintf("%q", missing), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = w.runInProcess(context.Background(), orchestrator.Options{})
	var pf *orchestrator.PreflightError
	if !errors.As(err, &pf) || !strings.Contains(err.Error(), "asking the engine for its flags on local failed: env -- BAKEOFF_LLAMATEST=1 "+missing+" --help") {
		t.Fatalf("got %v", err)
	}
	checkNothingLaunched(t, filepath.Join(w.root, "run"))
}

// TestPreflightBuildChangedOnResume: a resumed run whose engine prints
// another help than when the run started keeps both builds in its manifest
// and says that the rounds from here on are measured on another build.
func TestPreflightBuildChangedOnResume(t *testing.T) {
	w := newWorld(t)
	llamaPreflightScenarios(w, "")
	help := filepath.Join(w.root, "help.txt")
	fixture, err := os.ReadFile(filepath.Join("..", "preflight", "testdata", "llama-server-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(help, fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), "engine:\n", fmt.Sprintf("engine:\n  help: [cat, %q]\n", help), 1))
	if err := os.WriteFile(w.config, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{Only: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	// The engine is upgraded overnight: its help lists one more option.
	if err := os.WriteFile(help, append(fixture, []byte("--new-flag N                            a flag of the new build\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, events, err := w.runInProcess(context.Background(), orchestrator.Options{ResumeDir: out.RunDir})
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, e := range events {
		warned = warned || e.Kind == orchestrator.EventWarning && strings.Contains(e.Message, "llamacpp on local prints another help than when this run started")
	}
	if !warned {
		t.Error("no warning that the build changed")
	}
	run, err := results.ReadRun(out.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if e := run.Manifest.Engines; len(e) != 2 || e[0].HelpHash == e[1].HelpHash {
		t.Errorf("manifest engines %+v, want both builds", e)
	}
}
