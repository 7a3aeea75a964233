package orchestrator_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestRaceKillAndResume: a race (question: select) killed in its third
// round and resumed goes on with the same live set: the look the resumed
// run takes before that round says what the killed run's look said, and
// the round launches it. (Whether round 3 is still the race or already
// its confirmation depends on how noisy the machine left the first two.)
func TestRaceKillAndResume(t *testing.T) {
	w := newWorld(t)
	w.scenario("base", "")
	space := "name: slow\nextends: base\nspace:\n  args:\n    sim-slowdown: [2, 3]\n"
	if err := os.WriteFile(filepath.Join(w.scenDir, "slow.yaml"), []byte(space), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := w.writeConfig(campaignOpts{scenarios: []string{"base", "slow"}, speed: 20, requests: 12, maxTokens: 64, rounds: 4,
		extra: "question: select\nselect: {first_stage: 2}\n"})
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sequential := strings.Replace(string(data), "rounds: 4\n", "rounds: {min: 2, max: 4}\n", 1)
	if sequential == string(data) {
		t.Fatalf("no rounds line to make sequential in:\n%s", data)
	}
	if err := os.WriteFile(cfg, []byte(sequential), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(w.root, "run")
	cmd := w.bakeoff("run", cfg, "--out", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inRound3 := func(e orchestrator.JournalEntry) bool {
		return e.Round == 3 && e.Phase == "sweep" && e.Event == "start"
	}
	waitFor(t, "a sweep of round 3", func() bool { return journalHas(dir, inRound3) })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if out, err := w.bakeoff("run", cfg, "--resume", dir).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	var looks [][]string
	for _, e := range journal(t, dir) {
		if e.Phase == orchestrator.PhaseLook && e.Round == 3 && e.Look != nil {
			looks = append(looks, e.Look.Open)
		}
	}
	if len(looks) < 2 || !slices.Equal(looks[0], looks[len(looks)-1]) {
		t.Errorf("the looks before round 3, killed run then resumed: %v; want two, alike", looks)
	}
	run := readSummary(t, dir)
	o := run.Manifest.Order
	if len(looks) > 0 && (len(o) != 4 || !sameSet(o[2], looks[0])) {
		t.Errorf("rounds launched %v; round 3 is not what the killed run's look launched, %v", o, looks[0])
	}
	for _, s := range run.Summary.Scenarios {
		if s.Status != results.StatusOK {
			t.Errorf("%s round %d: %s after the resume", s.Name, s.Round, s.Status)
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
