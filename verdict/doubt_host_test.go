package verdict

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// hostAround is a launch's host state on one GPU of a host of cpus CPUs,
// loaded load as the sweep began: hot, HW thermal slowdown held the GPU's
// clocks down for a tenth of a ten-minute sweep (the driver's counters);
// else the GPU stayed at its clocks.
func hostAround(hot bool, load float64, cpus int) *hoststate.Launch {
	reading := func(uptime float64, us int64) *hoststate.State {
		idle, psi := hoststate.ReasonGPUIdle, 70.0
		return &hoststate.State{Load1: load, CPUs: cpus, CPUSome10: &psi, UptimeS: uptime,
			GPUs: []hoststate.GPU{{Index: 0, Reasons: &idle, Counters: &hoststate.Counters{HWThermalSlowdown: us}}}}
	}
	after := int64(0)
	if hot {
		after = 60e6
	}
	return &hoststate.Launch{Before: reading(1000, 0), After: reading(1600, after)}
}

// withHosts gives each scenario's launch of each round the host state
// host(scenario, k) returns for its k-th launch (nil: none recorded).
func withHosts(in records.Input, host func(name string, k int) *hoststate.Launch) records.Input {
	for name, ls := range in.Launches {
		for k := range ls {
			if h := host(name, k); h != nil {
				ls[k].Result = &results.ScenarioResult{HostState: h}
			}
		}
	}
	return in
}

// judgedHosts is doubtCampaign judged under o with the launches' host
// states.
func judgedHosts(t *testing.T, o Options, host func(name string, k int) *hoststate.Launch) *Verdict {
	t.Helper()
	v, err := Judged(withHosts(doubtCampaign(t), host), o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func doubtPaths() []struct {
	name string
	o    Options
} {
	return []struct {
		name string
		o    Options
	}{{"fixed", Options{}}, {"sequential", Options{Sequential: &SequentialPlan{MinRounds: 2, MaxRounds: 4}}}}
}

// hostDoubtOf is the cell's one doubt of a disturbed host, or nil.
func hostDoubtOf(c *Cell) *Doubt {
	if c == nil || c.Outcome != OutcomeDoubted || len(c.Doubts) != 1 || c.Doubts[0].Kind != DoubtHost {
		return nil
	}
	return &c.Doubts[0]
}

// TestDoubtGPUHeldDown: a launch of fast whose GPU was held down by heat
// during its sweep doubts fast at every level, on either path, naming the
// round and the reason; the same launch on a cool GPU doubts nothing, and
// fast is decided as without a reading.
func TestDoubtGPUHeldDown(t *testing.T) {
	for _, p := range doubtPaths() {
		t.Run(p.name, func(t *testing.T) {
			cool := func(string, int) *hoststate.Launch { return hostAround(false, 0.5, 64) }
			hot := func(name string, k int) *hoststate.Launch {
				return hostAround(name == "fast" && k == 2, 0.5, 64)
			}
			clean := judgedHosts(t, p.o, func(string, int) *hoststate.Launch { return nil })
			calm, held := judgedHosts(t, p.o, cool), judgedHosts(t, p.o, hot)
			round := doubtCampaign(t).Launches["fast"][2].Round
			want := fmt.Sprintf("a GPU was held down during the sweep in round %d: GPU 0 in HW thermal slowdown for 10%% of the sweep", round)
			for _, c := range verdicttest.Concurrencies(1, 4, 16) {
				if got, w := calm.Cell(c, "fast"), clean.Cell(c, "fast"); got.Outcome != w.Outcome || len(got.Doubts) != 0 {
					t.Errorf("cool GPU, fast at %s: %q (doubts %+v), want %q as without a reading", measure.LevelName(c), got.Outcome, got.Doubts, w.Outcome)
				}
				if d := hostDoubtOf(held.Cell(c, "fast")); d == nil || d.Text != want || d.Scenario != "fast" {
					t.Errorf("hot GPU, fast at %s: %+v; want doubted: %s", measure.LevelName(c), held.Cell(c, "fast"), want)
				}
				if d := held.Cell(c, "twin"); d.Outcome == OutcomeDoubted {
					t.Errorf("twin at %s doubted for fast's GPU: %+v", measure.LevelName(c), d.Doubts)
				}
			}
			if w := DoubtWords(DoubtHost); w != "host disturbed" || !strings.Contains(DoubtAdvice(DoubtHost), "--round") {
				t.Errorf("words %q, advice %q", w, DoubtAdvice(DoubtHost))
			}
		})
	}
}

// TestDoubtBusyHost: a host busy as fast's sweep began and quiet as the
// baseline's did, in one round, doubts fast against the baseline (a doubt
// of the pair, naming both loads); a host busy for every launch alike, as a
// small machine under other work is, doubts nothing and decides as a quiet
// one does, since it favours neither side.
func TestDoubtBusyHost(t *testing.T) {
	for _, p := range doubtPaths() {
		t.Run(p.name, func(t *testing.T) {
			quiet := judgedHosts(t, p.o, func(string, int) *hoststate.Launch { return hostAround(false, 0.5, 4) })
			allBusy := judgedHosts(t, p.o, func(string, int) *hoststate.Launch { return hostAround(false, 9.1, 4) })
			oneBusy := judgedHosts(t, p.o, func(name string, k int) *hoststate.Launch {
				if name == "fast" && k == 1 {
					return hostAround(false, 9.1, 4)
				}
				return hostAround(false, 0.5, 4)
			})
			round := doubtCampaign(t).Launches["fast"][1].Round
			want := fmt.Sprintf("the host was busy as fast's sweep began and quiet as baseline's did, in round %d (load 9.1 on 4 CPUs as the sweep began, tasks waiting for a CPU 70%% of the time; load 0.5 as baseline's began)", round)
			for _, c := range verdicttest.Concurrencies(1, 4, 16) {
				if got, w := allBusy.Cell(c, "fast"), quiet.Cell(c, "fast"); got.Outcome != w.Outcome || len(got.Doubts) != 0 {
					t.Errorf("busy alike, fast at %s: %q (doubts %+v), want %q as on a quiet host", measure.LevelName(c), got.Outcome, got.Doubts, w.Outcome)
				}
				if d := hostDoubtOf(oneBusy.Cell(c, "fast")); d == nil || d.Text != want {
					t.Errorf("busy for fast only, fast at %s: %+v; want doubted: %s", measure.LevelName(c), oneBusy.Cell(c, "fast"), want)
				}
			}
		})
	}
}
