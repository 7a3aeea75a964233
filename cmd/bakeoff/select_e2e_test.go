package main

import (
	"fmt"
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
// (question: select): the baseline and a space of two, four and six times
// as slow per step: gaps that no busy machine's noise can hide at the
// first stage's two rounds, whose elimination allowance grows with the
// noise measured (a 2× gap stayed in the race on a loaded CI machine).
// Each round launches what the race's look before it said; once the race
// is over (after the first stage's two rounds on a quiet machine, at its
// cap of three on a loaded one) one confirmation
// round launches each level's winner and runner-up, and no round runs
// after it. The report names the baseline the configuration to serve at
// every level, with its advantage measured on the confirmation round.
func TestSelectOverASimRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign")
	}
	bin, err := simBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := campaignWriter(t, dir)
	write("scenarios/base.yaml", "name: base\nengine: sglang\nmodel: /models/test\nargs:\n  tp-size: 2\n")
	write("scenarios/slow.yaml", "name: slow\nextends: base\nspace:\n  args:\n    sim-slowdown: [4, 6]\n")
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
  max_tokens: 128
  warmup: 1
question: select
select: {first_stage: 2}
baseline: base
scenarios: [base, slow]
rounds: {min: 2, max: 4}
`, testbin.FreePort(t)))
	sc := simCampaign{bin: bin, dir: dir, cfg: cfg, root: filepath.Join(dir, "results")}
	out := sc.run(t)
	for _, want := range []string{"out of the race after round", "a confirmation round", "Serve base at every level"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run does not say %q:\n%s", want, out)
		}
	}
	runDir := sc.onlyRun(t, "race")
	run, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if s := run.Manifest.Select; s == nil || s.DeltaPct != 2 || s.PCS != 0.95 || s.FirstStage != 2 {
		t.Fatalf("the manifest's select: %+v", s)
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := v.Selection
	if res == nil || !res.Done {
		t.Fatalf("the race: %+v", res)
	}
	// Each round of the race launched what the look before it said, the
	// confirmation round each level's winner and runner-up, and nothing
	// ran after it.
	o := run.Manifest.Order
	for r, lk := range res.Looks {
		if !sameSet(o[r], lk.Launched) {
			t.Errorf("round %d launched %v, the race %v", r+1, o[r], lk.Launched)
		}
	}
	if len(o) != 4 || !sameSet(o[res.Rounds], res.Confirm) || slices.ContainsFunc(o[res.Rounds+1:], func(row []string) bool { return len(row) > 0 }) {
		t.Errorf("rounds launched %v; the race ran %d rounds, then confirms %v", o, res.Rounds, res.Confirm)
	}
	for _, l := range res.Levels {
		if l.Selected != "base" || l.Advantage == nil || l.Advantage.Pct < 40 {
			t.Errorf("%s: serve %s, advantage %+v; want base, about 300%% ahead on the confirmation round", l.Level, l.Selected, l.Advantage)
		}
	}
}

// sameSet reports whether a and b hold the same names, in any order.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
