package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// TestHostStateThrottledLaunch plants a disturbed launch: the fake host's
// GPU 2 slows by HW thermal slowdown whenever it works
// (BAKEOFF_SIM_GPU_THROTTLE), and the scenario "hot" runs on GPUs 2 and 3
// while the baseline runs on 0 and 1. Every launch records the host's
// state before and after its sweep in one round trip, the GPUs through the
// real query on a real shell; hot's launches read GPU 2 held down during
// the sweep, the baseline's do not, and the verdict doubts hot at every
// level for it, naming the round and the reason.
func TestHostStateThrottledLaunch(t *testing.T) {
	w := newWorld(t)
	t.Setenv(gpu.SimGPUThrottleEnv, "2:hw_thermal_slowdown")
	w.scenario("base", "")
	hot := "name: hot\nextends: base\nenv:\n  CUDA_VISIBLE_DEVICES: \"2,3\"\n"
	if err := os.WriteFile(filepath.Join(w.scenDir, "hot.yaml"), []byte(hot), 0o644); err != nil {
		t.Fatal(err)
	}
	w.writeConfig(campaignOpts{scenarios: []string{"base", "hot"}, rounds: 2, requests: 24})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 0 {
		t.Fatalf("failed: %+v", out.Results)
	}
	run := readSummary(t, out.RunDir)
	for _, sr := range run.Summary.Scenarios {
		h := sr.HostState
		if h == nil || h.Before == nil || h.After == nil || h.Before.CPUs < 1 || len(h.After.GPUs) != gpu.DefaultGPUs || h.After.Driver != gpu.DriverVersion {
			t.Fatalf("%s round %d: host state %+v, want readings of the CPUs and the %d GPUs before and after the sweep", sr.Name, sr.RoundOf(), h, gpu.DefaultGPUs)
		}
		t.Logf("%s round %d: disturbed %q", sr.Name, sr.RoundOf(), h.Disturbed())
		gpus := h.Disturbed()
		if i := strings.Index(gpus, "GPU"); i >= 0 {
			gpus = gpus[i:]
		} else {
			gpus = ""
		}
		switch sr.Name {
		case "hot":
			if !strings.HasPrefix(gpus, "GPU 2 in HW thermal slowdown for ") {
				t.Errorf("hot round %d: disturbed %q, want GPU 2 in HW thermal slowdown", sr.RoundOf(), h.Disturbed())
			}
		default:
			if gpus != "" {
				t.Errorf("base round %d: disturbed %q, want no GPU held down", sr.RoundOf(), h.Disturbed())
			}
		}
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range v.Rows {
		c := v.Cell(row.Level, "hot")
		found := false
		for _, d := range c.Doubts {
			found = found || (d.Kind == verdict.DoubtHost && strings.Contains(d.Text, "round 1: ") && strings.Contains(d.Text, "GPU 2 in HW thermal slowdown"))
		}
		if c.Outcome != verdict.OutcomeDoubted || !found {
			t.Errorf("hot at %v: %q, doubts %+v; want doubted, the host disturbed", row.Level, c.Outcome, c.Doubts)
		}
	}
}
