package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// TestSelectOverASimRun races three configurations served by `bakeoff sim`
// (question: select): the baseline and a space of two, twice and three
// times as slow per step. After the two rounds of the first stage both
// slow points are out of the race at every level; the race is over, one
// confirmation round launches the baseline and its runner-up, and no
// round runs after it. The report names the baseline the configuration to
// serve at every level, with its advantage measured on the confirmation
// round.
func TestSelectOverASimRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign")
	}
	bin, err := simBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"configs", "scenarios"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("scenarios/base.yaml", "name: base\nengine: sglang\nmodel: /models/test\nargs:\n  tp-size: 2\n")
	write("scenarios/slow.yaml", "name: slow\nextends: base\nspace:\n  args:\n    sim-slowdown: [2, 3]\n")
	cfg := filepath.Join(dir, "configs", "select.yaml")
	write("configs/select.yaml", fmt.Sprintf(`campaign: race
host: local
gpu: none
engine:
  command: ["{bakeoff}", "sim", "--sim-speed", "20", "--sim-load-time", "10s", "--sim-launch-sigma", "0.01"]
  port: %d
  health_timeout: 1m
  poll_interval: 100ms
  stop_grace: 5s
sweep:
  concurrency: [1, 4]
  requests: 8
  max_tokens: 32
  warmup: 1
question: select
select: {first_stage: 2}
baseline: base
scenarios: [base, slow]
rounds: {min: 2, max: 4}
`, testbin.FreePort(t)))
	root := filepath.Join(dir, "results")
	cmd := exec.Command(bin, "run", cfg, "--results", root)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "BAKEOFF_SIM_STATE="+filepath.Join(dir, "sim-state"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the campaign: %v\n%s", err, out)
	}
	for _, want := range []string{"slow.slowdown3: out of the race after round 2: behind base by", "a confirmation round", "next: base, slow.slowdown2", "Serve base at every level", "slow.slowdown3  ■■   left after round 2: behind base by"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run does not say %q:\n%s", want, out)
		}
	}
	runs, err := filepath.Glob(filepath.Join(root, "race", "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v: %v", runs, err)
	}
	run, err := results.ReadRun(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if s := run.Manifest.Select; s == nil || s.DeltaPct != 2 || s.PCS != 0.95 || s.FirstStage != 2 {
		t.Fatalf("the manifest's select: %+v", s)
	}
	// Two rounds of all three, the confirmation round of the baseline and
	// its runner-up, and no fourth round.
	if o := run.Manifest.Order; len(o) != 4 || len(o[0]) != 3 || len(o[1]) != 3 || len(o[2]) != 2 || !slices.Contains(o[2], "base") || len(o[3]) != 0 {
		t.Errorf("rounds launched %v, want 3, 3, 2 (the confirmation) and none", o)
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := v.Selection
	if res == nil || !res.Done || res.Rounds != 2 {
		t.Fatalf("the race: %+v", res)
	}
	for _, l := range res.Levels {
		if l.Selected != "base" || l.Advantage == nil || l.Advantage.Pct < 40 {
			t.Errorf("%s: serve %s, advantage %+v; want base, about 100%% ahead on the confirmation round", l.Level, l.Selected, l.Advantage)
		}
	}
}
