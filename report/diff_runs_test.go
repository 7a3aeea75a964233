package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// runEffectNight is the baseline and EAGLE-3 topk 4 under realistic noise,
// the whole run slowed by factor (a run effect), its noise drawn from seed.
func runEffectNight(t *testing.T, factor float64, seed uint64) *results.Run {
	t.Helper()
	return slowedNight(t, factor, factor, seed)
}

// slowedNight is runEffectNight with the baseline slowed by base and
// EAGLE-3 by eagle.
func slowedNight(t *testing.T, base, eagle float64, seed uint64) *results.Run {
	t.Helper()
	s := smallSweep()
	b, e := verdicttest.RealisticNoise(verdicttest.Baseline), verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)
	b.Slowdown, e.Slowdown = base, eagle
	const rounds = fixtureRounds
	per := [][][]measure.Record{make([][]measure.Record, rounds), make([][]measure.Record, rounds)}
	for _, l := range verdicttest.Campaign([]verdicttest.Engine{b, e}, s, rounds, seed) {
		per[l.Scenario][l.Round-1] = l.Records
	}
	m := verdicttest.Manifest("nightly", "20260101T000000Z", "sha256:aaaa", "baseline", s, "baseline", "eagle3-topk4")
	m.Rounds = rounds
	run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
		{Name: "baseline", Rounds: per[0]}, {Name: "eagle3-topk4", Rounds: per[1]}})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestDiffRunEffect: a run effect of ±8% imposed on the whole second run
// changes no row of the ratios to the baseline (the same noise draws, each
// run's ratio the same), and without history the absolute rows, which do
// change by 8%, are shown, not judged: no REGRESSED, and the last line
// says why. Golden: the +8% diff, whose OLD and NEW are renamed.
func TestDiffRunEffect(t *testing.T) {
	old := runEffectNight(t, 1, 61)
	text := func(factor float64) (string, *rundiff.Result) {
		d, err := rundiff.Compare(old, runEffectNight(t, factor, 62), rundiff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d.OldRun, d.NewRun = "results/nightly/old", "results/nightly/new"
		var b bytes.Buffer
		if err := DiffText(&b, d); err != nil {
			t.Fatal(err)
		}
		return b.String(), d
	}
	outcomes := func(d *rundiff.Result) []string {
		var out []string
		for _, r := range d.Ratios {
			out = append(out, fmt.Sprintf("%s %s %s regression %v improvement %v", r.Variant, measure.LevelName(r.Level), r.Outcome, r.Regression, r.Improvement))
		}
		return out
	}
	_, plain := text(1)
	for _, f := range []float64{1.08, 1 / 1.08} {
		got, d := text(f)
		if o, p := outcomes(d), outcomes(plain); len(o) == 0 || !slices.Equal(o, p) {
			t.Errorf("run effect ×%.2f: the ratio rows' outcomes changed:\n%s\nwithout it:\n%s", f, strings.Join(o, "\n"), strings.Join(p, "\n"))
		}
		if d.Regressed() || !strings.Contains(got, "not judged: run effect unknown") {
			t.Errorf("run effect ×%.2f: regressed %v, or the absolute rows are judged:\n%s", f, d.Regressed(), got)
		}
		if f > 1 {
			golden.Check(t, filepath.Join("testdata", "diff-run-effect.txt"), []byte(got))
		}
	}
}

// TestDiffHostLoad: a new run whose host was busy around its sweeps (the
// load average each launch recorded) is said to be, above the table; two
// runs on a host as quiet are not.
func TestDiffHostLoad(t *testing.T) {
	old, new := runEffectNight(t, 1, 71), runEffectNight(t, 1, 72)
	load := func(r *results.Run, v float64) {
		for i := range r.Summary.Scenarios {
			r.Summary.Scenarios[i].HostState = &hoststate.Launch{Before: &hoststate.State{Load1: v}, After: &hoststate.State{Load1: v + 0.2}}
		}
	}
	old.Manifest.Host.Driver, new.Manifest.Host.Driver = "580.65", "590.12"
	for _, tc := range []struct {
		oldLoad, newLoad float64
		want             string
	}{
		{0.3, 9.0, "! the new run ran on a busier host: load 9.1 against 0.4"},
		{0.3, 0.5, ""},
	} {
		load(old, tc.oldLoad)
		load(new, tc.newLoad)
		d, err := rundiff.Compare(old, new, rundiff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := DiffText(&b, d); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "! the runs' hosts differ: GPU driver 580.65 → 590.12") {
			t.Errorf("the diff does not say the drivers differ:\n%s", b.String())
		}
		if got := strings.Contains(b.String(), "busier host"); got != (tc.want != "") || !strings.Contains(b.String(), tc.want) {
			t.Errorf("loads %.1f and %.1f: the diff says:\n%s", tc.oldLoad, tc.newLoad, b.String())
		}
	}
}
