package orchestrator_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestCampaignWithoutGPU runs an A/A campaign (two scenarios of one
// configuration, two rounds) with gpu: none against the sim on a host
// whose nvidia-smi is missing, or is a tripwire that records each call and
// fails. Every launch must succeed, and nothing may have asked for a GPU:
// not the wait before or after a server, not the host's facts, not the
// power sampler. A GPU wait that still ran would fail the launch (no
// nvidia-smi, or one that exits 1); a facts query would warn; a sampler
// would leave power.json; the tripwire's record catches any of them.
func TestCampaignWithoutGPU(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tripwire bool // an nvidia-smi on PATH that must never run
	}{
		{name: "no nvidia-smi on PATH"},
		{name: "an nvidia-smi that must not run", tripwire: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			smi := filepath.Join(w.root, "bin", "nvidia-smi")
			if err := os.Remove(smi); err != nil {
				t.Fatal(err)
			}
			record := filepath.Join(w.root, "nvidia-smi-calls")
			if tc.tripwire {
				script := "#!/bin/sh\necho \"nvidia-smi $*\" >> " + record + "\necho 'nvidia-smi ran on a host with gpu: none' >&2\nexit 1\n"
				if err := os.WriteFile(smi, []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				t.Setenv("PATH", withoutNvidiaSMI(os.Getenv("PATH")))
				if p, err := exec.LookPath("nvidia-smi"); err == nil {
					t.Fatalf("nvidia-smi is still on PATH: %s", p)
				}
			}
			w.scenario("a", "")
			if err := os.WriteFile(filepath.Join(w.scenDir, "b.yaml"), []byte("name: b\nextends: a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, rounds: 2, noGPU: true})

			out, events, err := w.runInProcess(context.Background(), orchestrator.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if out.Failed != 0 || out.Canceled || len(out.Results) != 4 {
				t.Fatalf("failed %d, canceled %v, %d launches, want 4 ok: %+v", out.Failed, out.Canceled, len(out.Results), out.Results)
			}
			for _, r := range out.Results {
				if r.Status != results.StatusOK || len(r.Levels) != 2 {
					t.Errorf("%s round %d: %s %s at %s, %d levels", r.Name, r.Round, r.Status, r.Reason, r.FailedPhase, len(r.Levels))
				}
				if _, err := os.Stat(filepath.Join(out.RunDir, r.Dir, results.PowerFile)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s round %d: a power sampler ran (%s: %v)", r.Name, r.Round, results.PowerFile, err)
				}
			}
			if a, b := launchCommand(t, out, "a"), launchCommand(t, out, "b"); a != b {
				t.Errorf("an A/A pair must launch one command line:\n a: %s\n b: %s", a, b)
			}
			for _, e := range events {
				if e.Kind == orchestrator.EventWarning && strings.Contains(strings.ToLower(e.Message), "gpu") {
					t.Errorf("warning: %s", e.Message)
				}
			}
			for _, e := range journal(t, out.RunDir) {
				if strings.HasPrefix(e.Phase, "gpu-free") {
					t.Fatalf("the journal has a GPU wait: %+v", e)
				}
			}
			host := readSummary(t, out.RunDir).Manifest.Host
			if !host.NoGPU || len(host.GPUs) != 0 || host.Driver != "" {
				t.Errorf("manifest host %+v: want no_gpu and no GPU facts", host)
			}
			if calls, err := os.ReadFile(record); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("nvidia-smi ran (%v):\n%s", err, calls)
			}
		})
	}
}

// withoutNvidiaSMI is path less every directory that holds an nvidia-smi.
func withoutNvidiaSMI(path string) string {
	var keep []string
	for _, d := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(d, "nvidia-smi")); err != nil {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// launchCommand is the command line scenario name was launched with in
// round 1, less the variables that name the launch.
func launchCommand(t *testing.T, out *orchestrator.Outcome, name string) string {
	t.Helper()
	for _, r := range out.Results {
		if r.Name == name && r.Round == 1 {
			var words []string
			for _, f := range strings.Fields(r.Launch) {
				if !strings.HasPrefix(f, orchestrator.EnvRound+"=") && !strings.HasPrefix(f, orchestrator.EnvLaunch+"=") {
					words = append(words, f)
				}
			}
			return strings.Join(words, " ")
		}
	}
	t.Fatalf("no launch of %s in round 1", name)
	return ""
}
