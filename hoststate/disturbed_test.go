package hoststate

import "testing"

// gpuAt is GPU i with the active reasons r and, when counted, the
// driver's counters.
func gpuAt(i int, r Reasons, counters *Counters) GPU {
	return GPU{Index: i, Reasons: &r, Counters: counters}
}

func TestDisturbed(t *testing.T) {
	psi := func(v float64) *float64 { return &v }
	quietCPU := State{Load1: 3, CPUs: 64, CPUSome10: psi(1), UptimeS: 1000}
	at := func(uptime float64, gpus ...GPU) *State {
		s := quietCPU
		s.UptimeS, s.GPUs = uptime, gpus
		return &s
	}
	for _, tc := range []struct {
		name string
		l    *Launch
		want string
	}{
		{"no reading", nil, ""},
		{"quiet, GPUs idle before and at full power after",
			&Launch{Before: at(1000, gpuAt(0, ReasonGPUIdle, &Counters{})), After: at(1600, gpuAt(0, ReasonSWPowerCap, &Counters{SWPowerCap: 300e6}))}, ""},
		{"HW thermal slowdown for a tenth of the sweep, by the counters",
			&Launch{Before: at(1000, gpuAt(0, 0, &Counters{}), gpuAt(3, 0, &Counters{HWThermalSlowdown: 5e6})),
				After: at(1600, gpuAt(0, 0, &Counters{}), gpuAt(3, 0, &Counters{HWThermalSlowdown: 65e6}))},
			"GPU 3 in HW thermal slowdown for 10% of the sweep"},
		{"under the share, the counters outweigh the bit at the end",
			&Launch{Before: at(1000, gpuAt(0, 0, &Counters{})), After: at(1600, gpuAt(0, ReasonSWThermalSlowdown, &Counters{SWThermalSlowdown: 1e6}))}, ""},
		{"an old driver's bits, before and after",
			&Launch{Before: at(1000, gpuAt(1, ReasonHWSlowdown|ReasonHWThermalSlowdown, nil)), After: at(1600, gpuAt(1, ReasonHWThermalSlowdown, nil))},
			"GPU 1 in HW slowdown as the sweep began, HW thermal slowdown as the sweep began and as it ended"},
		{"HW slowdown has no counter",
			&Launch{Before: at(1000, gpuAt(0, 0, &Counters{})), After: at(1600, gpuAt(0, ReasonHWSlowdown, &Counters{}))},
			"GPU 0 in HW slowdown as the sweep ended"},
		{"oversubscribed as the sweep began", &Launch{Before: &State{Load1: 9.1, CPUs: 4, CPUSome10: psi(62)}, After: &State{Load1: 9.5, CPUs: 4}},
			"load 9.1 on 4 CPUs as the sweep began, tasks waiting for a CPU 62% of the time"},
		{"loaded, no PSI", &Launch{Before: &State{Load1: 9.1, CPUs: 4}}, "load 9.1 on 4 CPUs as the sweep began"},
		{"loaded, but nothing waited for a CPU", &Launch{Before: &State{Load1: 9.1, CPUs: 4, CPUSome10: psi(3)}}, ""},
		{"loaded only after: the sweep's own load", &Launch{Before: &State{Load1: 0.5, CPUs: 4}, After: &State{Load1: 12, CPUs: 4}}, ""},
		{"CPUs unknown (a run before they were read)", &Launch{Before: &State{Load1: 40}}, ""},
		{"both",
			&Launch{Before: &State{Load1: 9.1, CPUs: 4, GPUs: []GPU{gpuAt(0, ReasonHWPowerBrakeSlowdown, nil)}}},
			"load 9.1 on 4 CPUs as the sweep began; GPU 0 in HW power brake slowdown as the sweep began"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.l.Disturbed(); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// TestBusyAndQuiet: a launch is busy past two runnable tasks a CPU (with
// the pressure to show it), quiet at one or fewer, and neither between, so
// that a load wavering around one threshold cannot set one launch of a
// round against the other.
func TestBusyAndQuiet(t *testing.T) {
	psi := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name  string
		l     *Launch
		busy  bool
		quiet bool
	}{
		{"idle", &Launch{Before: &State{Load1: 0.4, CPUs: 4}}, false, true},
		{"one task a CPU", &Launch{Before: &State{Load1: 4, CPUs: 4, CPUSome10: psi(20)}}, false, true},
		{"between", &Launch{Before: &State{Load1: 6, CPUs: 4, CPUSome10: psi(40)}}, false, false},
		{"oversubscribed", &Launch{Before: &State{Load1: 9.1, CPUs: 4, CPUSome10: psi(62)}}, true, false},
		{"CPUs unknown", &Launch{Before: &State{Load1: 0.1}}, false, false},
		{"no reading before", &Launch{After: &State{Load1: 0.1, CPUs: 4}}, false, false},
		{"none", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, quiet := tc.l.Quiet()
			if busy := tc.l.Busy() != ""; busy != tc.busy || quiet != tc.quiet {
				t.Errorf("busy %v (%q), quiet %v; want %v, %v", busy, tc.l.Busy(), quiet, tc.busy, tc.quiet)
			}
		})
	}
}
