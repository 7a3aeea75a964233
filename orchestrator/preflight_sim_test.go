package orchestrator_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
)

// TestPreflightAgainstSim: the preflight reads `bakeoff sim --help`, SGLang's
// argparse help as the sim prints it, through engine.command as the demo
// launches it. An unknown flag and a bad choice in the last scenario stop
// the run before any launch (exit 2, at their lines, with the closest
// spelling); a deprecated alias is a warning and the campaign runs, and
// FlashInfer allreduce fusion on the fake GPUs (SM120) is warned about.
func TestPreflightAgainstSim(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		w := newWorld(t)
		w.scenario("a", "")
		w.scenario("b", "a", "cuda-graph-max-bs: 64", "enable-flashinfer-allreduce-fusion: true")
		w.scenario("c", "a", "speculative-eagle-top-k: 4", "attention-backend: flashinfr")
		w.writeConfig(campaignOpts{scenarios: []string{"a", "b", "c"}})
		run := filepath.Join(w.root, "run")
		out, err := w.bakeoff("run", w.config, "--out", run).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Fatalf("exit %v, want 2\n%s", err, out)
		}
		b, c := filepath.Join(w.scenDir, "b.yaml"), filepath.Join(w.scenDir, "c.yaml")
		for _, want := range []string{
			c + ":4:3: scenario c: unknown flag --speculative-eagle-top-k; the closest it accepts is --speculative-eagle-topk (SGLang, help ",
			c + ":5:3: scenario c: invalid choice for --attention-backend: \"flashinfr\"",
			b + ":4:3: scenario b: --cuda-graph-max-bs is deprecated; use --cuda-graph-max-bs-decode",
			// The fake nvidia-smi's GPUs are the RTX PRO 6000's SM120.
			b + ":5:3: scenario b: --enable-flashinfer-allreduce-fusion turns FlashInfer allreduce fusion on, and this host's GPUs are compute capability 12.0: current SGLang refuses to start",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the run's output does not say %q:\n%s", want, out)
			}
		}
		checkNothingLaunched(t, run)
	})
	t.Run("deprecated", func(t *testing.T) {
		w := newWorld(t)
		w.scenario("a", "")
		w.scenario("b", "a", "cuda-graph-max-bs: 64")
		w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}})
		out, events, err := w.runInProcess(context.Background(), orchestrator.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Failed > 0 {
			t.Fatalf("%d launches failed: %+v", out.Failed, out.Results)
		}
		want := filepath.Join(w.scenDir, "b.yaml") + ":4:3: scenario b: --cuda-graph-max-bs is deprecated; use --cuda-graph-max-bs-decode"
		warned := false
		for _, e := range events {
			warned = warned || e.Kind == orchestrator.EventWarning && e.Scenario == "b" && strings.HasPrefix(e.Message, want)
		}
		if !warned {
			t.Errorf("no warning %q", want)
		}
	})
}
