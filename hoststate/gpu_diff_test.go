package hoststate

import (
	"slices"
	"strings"
	"testing"
)

// h200Launch is a launch on GPUs 0–3 of an H200 host at limit W and max
// SM clock sm MHz, each GPU of hot seeing HW thermal slowdown during the
// sweep (by the driver's counters), errs uncorrected ECC errors on GPU 2.
func h200Launch(limit float64, sm int, errs int64, hot ...int) *Launch {
	reading := func(uptime float64, after bool) *State {
		s := &State{Load1: 0.5, CPUs: 64, UptimeS: uptime, Driver: "580.159.04"}
		for i := range 4 {
			c := &Counters{}
			if after && slices.Contains(hot, i) {
				c.HWThermalSlowdown = 30e6
			}
			e := int64(0)
			if i == 2 {
				e = errs
			}
			mem := 3201
			s.GPUs = append(s.GPUs, GPU{Index: i, PowerLimitW: &limit, MaxSMMHz: &sm, MaxMemMHz: &mem, ECCUncorrected: &e,
				Persistence: ptr(true), Reasons: ptr(ReasonGPUIdle), Counters: c})
		}
		return s
	}
	return &Launch{Before: reading(1000, false), After: reading(1600, true)}
}

func TestGPUDiffers(t *testing.T) {
	run := func(n int, l func(k int) *Launch) []*Launch {
		var out []*Launch
		for k := range n {
			out = append(out, l(k))
		}
		return out
	}
	quiet := run(12, func(int) *Launch { return h200Launch(700, 1980, 0) })
	for _, tc := range []struct {
		name     string
		old, new []*Launch
		want     []string
	}{
		{"the same GPUs alike", quiet, quiet, nil},
		{"GPU 3 hot in 4 of 12 launches", quiet, run(12, func(k int) *Launch {
			if k%3 == 0 {
				return h200Launch(700, 1980, 0, 3)
			}
			return h200Launch(700, 1980, 0)
		}), []string{"the new run's GPU 3 hit HW thermal slowdown in 4 of 12 launches; the old run never did"}},
		{"two GPUs hot in the old run", run(6, func(int) *Launch { return h200Launch(700, 1980, 0, 0, 1) }), quiet,
			[]string{"the old run's GPUs 0 and 1 hit HW thermal slowdown in 6 of 6 launches; the new run never did"}},
		{"a lower power limit and clock, and ECC errors", quiet, run(3, func(int) *Launch { return h200Launch(600, 1755, 3) }),
			[]string{"the runs' GPUs differ: power limit 700 W → 600 W; max SM clock 1980 MHz → 1755 MHz",
				"the new run's GPU 2 counted 3 uncorrected ECC errors; the old run none"}},
		{"a run without GPU readings", quiet, []*Launch{{Before: &State{Load1: 1}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GPUDiffers(tc.old, tc.new); !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
