package report

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// gpuLaunch is a launch's host state on four GPUs at power limit W, each
// GPU of hot in HW thermal slowdown for a tenth of its ten-minute sweep
// (the driver's counters), the host's 1-minute load load on 64 CPUs.
func gpuLaunch(limit float64, load float64, hot ...int) *hoststate.Launch {
	reading := func(uptime float64, after bool) *hoststate.State {
		s := &hoststate.State{Load1: load, CPUs: 64, UptimeS: uptime, Driver: "580.159.04"}
		for i := range 4 {
			c := &hoststate.Counters{}
			if after && slices.Contains(hot, i) {
				c.HWThermalSlowdown = 60e6
			}
			idle, sm := hoststate.ReasonGPUIdle, 1980
			s.GPUs = append(s.GPUs, hoststate.GPU{Index: i, PowerLimitW: &limit, MaxSMMHz: &sm, Reasons: &idle, Counters: c})
		}
		return s
	}
	return &hoststate.Launch{Before: reading(1000, false), After: reading(1600, true)}
}

// TestDiffHostState: a new run on another kernel and CPU governor, at a
// lower power limit, on a busier host, whose GPU 3 ran hot in some
// launches, says each above its table, in words; two runs whose hosts and
// GPUs were alike say none of it. Golden: the first.
func TestDiffHostState(t *testing.T) {
	old, new := runEffectNight(t, 1, 71), runEffectNight(t, 1, 72)
	set := func(r *results.Run, f func(k int) *hoststate.Launch) {
		for k := range r.Summary.Scenarios {
			r.Summary.Scenarios[k].HostState = f(k)
		}
	}
	diff := func() string {
		d, err := rundiff.Compare(old, new, rundiff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d.OldRun, d.NewRun = "results/nightly/old", "results/nightly/new"
		var b bytes.Buffer
		if err := DiffText(&b, d); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	old.Manifest.Host.Kernel, old.Manifest.Host.Governor = "6.8.0-49-generic", "performance"
	new.Manifest.Host.Kernel, new.Manifest.Host.Governor = "6.8.0-49-generic", "performance"
	set(old, func(int) *hoststate.Launch { return gpuLaunch(700, 0.4) })
	set(new, func(int) *hoststate.Launch { return gpuLaunch(700, 0.5) })
	if got := diff(); strings.Contains(got, "! the runs'") || strings.Contains(got, "busier") || strings.Contains(got, "GPU 3") || strings.Contains(got, "doubted") {
		t.Errorf("alike runs:\n%s", got)
	}

	new.Manifest.Host.Kernel, new.Manifest.Host.Governor = "6.11.0-19-generic", "powersave"
	set(new, func(k int) *hoststate.Launch {
		if k%3 == 0 {
			return gpuLaunch(600, 9.1, 3)
		}
		return gpuLaunch(600, 9.1)
	})
	got := diff()
	for _, want := range []string{
		"! the runs' hosts differ: kernel 6.8.0-49-generic → 6.11.0-19-generic; CPU governor performance → powersave",
		"! the new run ran on a busier host: load 9.1 against 0.4",
		"! the runs' GPUs differ: power limit 700 W → 600 W: a difference may be the GPUs'",
		"! the new run's GPU 3 hit HW thermal slowdown in 4 of 10 launches; the old run never did: a difference may be the GPUs'",
		"│ eagle3-topk4 vs baseline │  5 │          −38.8% │          −38.5% │  +0.5% │ doubted: host disturbed in NEW │",
		"nothing judged: no regression can be named; 12 rows doubted, not judged: host disturbed in NEW",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff does not say %q:\n%s", want, got)
		}
	}
	golden.Check(t, filepath.Join("testdata", "diff-host.txt"), []byte(got))
}

// TestDoubtedRowsCannotRegress: EAGLE-3 10% slower in a new run whose GPU 3
// ran hot in every launch is REGRESSED when the hot GPU is not known and
// not when it is: a run that doubted its own comparison cannot vouch for
// the change its ratio shows, and the last line says which rows were kept
// out and why, instead of passing in silence.
func TestDoubtedRowsCannotRegress(t *testing.T) {
	old, new := slowedNight(t, 1, 1, 81), slowedNight(t, 1, 1.1, 82)
	d, err := rundiff.Compare(old, new, rundiff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Regressed() {
		t.Fatalf("a variant 10%% slower with no doubt: not REGRESSED")
	}
	for k := range new.Summary.Scenarios {
		new.Summary.Scenarios[k].HostState = gpuLaunch(700, 0.4, 3)
	}
	d, err = rundiff.Compare(old, new, rundiff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := DiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	if d.Regressed() {
		t.Errorf("REGRESSED on rows the new run doubted:\n%s", b.String())
	}
	for _, r := range d.Ratios {
		if r.Outcome != verdict.OutcomeDoubted || !slices.Equal(r.DoubtedIn, []string{"NEW"}) {
			t.Errorf("%s %s: outcome %s doubted in %v, want doubted in NEW", r.Variant, measure.LevelName(r.Level), r.Outcome, r.DoubtedIn)
		}
	}
	if d.Comparisons() != 0 || !strings.Contains(b.String(), "rows doubted, not judged: host disturbed in NEW") {
		t.Errorf("%d comparisons judged; the last line does not name the doubted rows:\n%s", d.Comparisons(), b.String())
	}
}
