package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// simBinary is bakeoff built once for the tests of this file that run
// campaigns against `bakeoff sim` processes.
var simBinary = sync.OnceValues(func() (string, error) {
	path, _, err := testbin.Build()
	return path, err
})

// planCampaign writes a sequential campaign of an A/A pair served by
// `bakeoff sim` on this machine (no GPU, a port of its own, its workdir
// and the sim's state under dir): rounds {min: 2, max: 3}, requests auto
// at C=1 and 4, and a budget ample enough that the planner spends it on
// the third round's requests.
func planCampaign(t *testing.T, dir string) string {
	t.Helper()
	write := campaignWriter(t, dir)
	write("scenarios/base.yaml", "name: base\nengine: sglang\nmodel: /models/test\nargs:\n  tp-size: 2\n  enable-metrics: true\n")
	write("scenarios/twin.yaml", "name: twin\nextends: base\n")
	write("configs/plan.yaml", fmt.Sprintf(`campaign: plan
host: local
gpu: none
engine:
  command: ["{bakeoff}", "sim", "--sim-speed", "20", "--sim-load-time", "20s", "--sim-launch-sigma", "0.01"]
  port: %d
  health_timeout: 1m
  poll_interval: 100ms
  stop_grace: 5s
sweep:
  concurrency: [1, 4]
  requests: auto
  max_tokens: 64
  warmup: 1
baseline: base
scenarios: [base, twin]
rounds: {min: 2, max: 3}
budget: 20m
`, testbin.FreePort(t)))
	return filepath.Join(dir, "configs", "plan.yaml")
}

// campaignWriter makes dir's configs and scenarios folders and returns a
// function that writes a file below dir.
func campaignWriter(t *testing.T, dir string) func(name, body string) {
	t.Helper()
	for _, d := range []string{"configs", "scenarios"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// simCampaign is planCampaign written into a test's directory, with the
// bakeoff binary that runs it and the results root its runs go to.
type simCampaign struct {
	bin, dir, cfg, root string
	c                   *campaign.Campaign
}

func newPlanCampaign(t *testing.T) simCampaign {
	t.Helper()
	bin, err := simBinary()
	if err != nil {
		t.Fatal(err)
	}
	sc := simCampaign{bin: bin, dir: t.TempDir()}
	sc.cfg = planCampaign(t, sc.dir)
	sc.root = filepath.Join(sc.dir, "results")
	if sc.c, err = campaign.Load(sc.cfg); err != nil {
		t.Fatal(err)
	}
	return sc
}

// run runs the campaign once to its end and returns what it printed.
func (sc simCampaign) run(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command(sc.bin, "run", sc.cfg, "--results", sc.root)
	cmd.Env = append(os.Environ(), "TMPDIR="+sc.dir, "BAKEOFF_SIM_STATE="+filepath.Join(sc.dir, "sim-state"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the campaign: %v\n%s", err, out)
	}
	return out
}

// onlyRun is the one run directory of campaign name under the results
// root.
func (sc simCampaign) onlyRun(t *testing.T, name string) string {
	t.Helper()
	runs, err := filepath.Glob(filepath.Join(sc.root, name, "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs under %s: %v (%v)", sc.root, runs, err)
	}
	return runs[0]
}

// lookRequestsRE reads a look's requests per level: "C=1 300, C=4 300".
var lookRequestsRE = regexp.MustCompile(`C=(\d+) (\d+)`)

// TestPlanOverASimRun runs a short sequential campaign against real sim
// processes and holds the planner to what then happened: the requests each
// look prints for a level (scale included) are the requests every launch
// of the next round sent there, as summary.json records them; the plan
// printed before the first round, made from the sim's model and the
// campaign alone, is logged beside the run's length. A second
// run then checks the host's noise profile (noise_e2e_test.go).
func TestPlanOverASimRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign")
	}
	pc := newPlanCampaign(t)
	c := pc.c
	out := pc.run(t)
	runDir := pc.onlyRun(t, "plan")
	run, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := orchestrator.ReadJournal(filepath.Join(runDir, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}

	// Every look's printed requests are what the next round sent.
	looks, scaled := 0, false
	for _, e := range entries {
		if e.Phase != orchestrator.PhaseLook || e.Look == nil || e.Look.Plan == "" {
			continue
		}
		looks++
		scaled = scaled || e.Look.Scale > 1
		printed := map[int]int{}
		for _, m := range lookRequestsRE.FindAllStringSubmatch(strings.SplitN(e.Look.Plan, "; since", 2)[0], -1) {
			conc, _ := strconv.Atoi(m[1])
			n, _ := strconv.Atoi(m[2])
			printed[conc] = n
		}
		if len(printed) != len(c.Sweep.Concurrency) {
			t.Errorf("the look before round %d prints %v: %s", e.Round, printed, e.Look.Plan)
		}
		sent := 0
		for _, sr := range run.Summary.Scenarios {
			if sr.RoundOf() != e.Round || sr.Status != results.StatusOK {
				continue
			}
			for _, l := range sr.Levels {
				sent++
				if want := printed[l.Level.Concurrency]; l.Requests != want {
					t.Errorf("round %d, %s at %s: sent %d requests, the look printed %d (scale %d): %s", e.Round, sr.Name,
						measure.LevelName(l.Level), l.Requests, want, e.Look.Scale, e.Look.Plan)
				}
			}
		}
		if sent == 0 {
			t.Errorf("no launch of round %d after its look: %s", e.Round, e.Look.Plan)
		}
		t.Logf("look before round %d: %s", e.Round, e.Look.Plan)
	}
	if looks == 0 || !scaled {
		t.Fatalf("%d looks planned a round, none at a multiple of the auto count:\n%s", looks, out)
	}

	// The plan before the first round, from the campaign alone, against
	// the run's length.
	n := planNight(c, filepath.Join(pc.dir, "no-earlier-run"), run.Manifest.Started)
	took := entries[len(entries)-1].Time.Sub(entries[0].Time).Seconds()
	t.Logf("%s\nthe run took %.0f s", n, took)
	// Said, not asserted: on a shared machine a launch takes what the
	// neighbours leave it (32 s against the 9 s planned at a load average
	// of 40). TestDemoPlanAgainstARecordedRun holds the plan to a recorded
	// demo run instead, where the figures cannot move under the test.
	t.Logf("the plan before round 1 expects %.0f s, the run took %.0f s (×%.2f)", n.plan.Seconds, took, n.plan.Seconds/took)

	// The same campaign once more: the host's noise profile its first run
	// left is lent to the second.
	t.Run("noise profile", func(t *testing.T) { checkNoiseProfileAcrossRuns(t, pc) })
}
