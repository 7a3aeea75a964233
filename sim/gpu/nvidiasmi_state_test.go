package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
)

// The queries a launch's host state reading makes (hoststate.Command): the
// newer one, and the older one a driver before the reasons' rename answers.
const (
	hostStateQueryNew = "index,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,enforced.power.limit," +
		"ecc.errors.uncorrected.volatile.total,persistence_mode,clocks_event_reasons.active,clocks_event_reasons_counters.sw_power_cap," +
		"clocks_event_reasons_counters.sw_thermal_slowdown,clocks_event_reasons_counters.hw_thermal_slowdown,clocks_event_reasons_counters.hw_power_brake_slowdown"
	hostStateQueryOld = "index,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,enforced.power.limit," +
		"ecc.errors.uncorrected.volatile.total,persistence_mode,clocks_throttle_reasons.active"
)

// TestNvidiaSMIHostState: the fields of a host state reading, on three GPUs
// of which GPU 1 works (an engine busy 80% of the last second, 0.8 s in
// all) and GPU 2 is idle: without a throttle, GPU 1 boosts and only idle
// GPUs show a reason (idle); with GPU 1 and GPU 2 set to HW thermal
// slowdown, GPU 1 runs hot at half its clock with the reason active and its
// counter at its busy time, and idle GPU 2 shows nothing of it.
func TestNvidiaSMIHostState(t *testing.T) {
	now := time.Date(2026, 12, 4, 14, 35, 45, 0, time.UTC)
	for _, tc := range []struct {
		name, query, format, throttle string
		code                          int
	}{
		{"state-quiet", hostStateQueryNew, "csv,noheader,nounits", "", 0},
		{"state-quiet-header", hostStateQueryNew, "csv", "", 0},
		{"state-old-query", hostStateQueryOld, "csv,noheader,nounits", "", 0},
		{"state-throttled", hostStateQueryNew, "csv,noheader,nounits", "1:hw_thermal_slowdown,2:hw_thermal_slowdown", 0},
		{"state-throttled-sw", hostStateQueryNew, "csv,noheader,nounits", "1:sw_power_cap+sw_thermal_slowdown", 0},
		{"state-throttle-bad", hostStateQueryNew, "csv", "1:too_hot", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := Activity{PID: os.Getpid(), GPUs: []int{1}, Marks: [][2]int64{{now.Add(-time.Second).UnixNano(), 0}, {now.UnixNano(), int64(800 * time.Millisecond)}}}
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(activityPath(dir, a.PID), b, 0o644); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{SimStateEnv: dir, SimGPUsEnv: "3", SimGPUThrottleEnv: tc.throttle}
			var out, errb bytes.Buffer
			code := NvidiaSMI(context.Background(), []string{"--query-gpu=" + tc.query, "--format=" + tc.format},
				SMIEnv{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }, Now: func() time.Time { return now }})
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errb.String())
			}
			golden.Check(t, filepath.Join("testdata", "nvidia-smi", tc.name+".txt"), []byte(out.String()+errb.String()))
		})
	}
}

// TestNvidiaSMIHeaderAsH200: the fake names the host state fields as a
// real H200's driver (580.159.04) does in its header, aliases resolved
// (clocks.sm → clocks.current.sm) and units as it prints them.
func TestNvidiaSMIHeaderAsH200(t *testing.T) {
	first := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitN(string(b), "\n", 2)[0]
	}
	real := first(filepath.Join("..", "..", "hoststate", "testdata", "h200", "query-hoststate.csv"))
	if fake := first(filepath.Join("testdata", "nvidia-smi", "state-quiet-header.txt")); fake != real {
		t.Errorf("the fake's header:\n%s\nthe H200's:\n%s", fake, real)
	}
}

func TestThrottleEnv(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want map[int]uint64
		err  string
	}{
		{"", nil, ""},
		{"3:hw_thermal_slowdown", map[int]uint64{3: reasonHWThermal}, ""},
		{"0:sw_power_cap+hw_slowdown, 3:sw_thermal_slowdown", map[int]uint64{0: reasonSWPowerCap | reasonHWSlowdown, 3: reasonSWThermal}, ""},
		{"hot", nil, "want GPU:REASON"},
		{"1:idle", nil, `"idle" is not one of`},
	} {
		got, err := Throttle(func(string) string { return tc.v })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.v, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v, %v", tc.v, got, err)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: GPU %d %#x, want %#x", tc.v, k, got[k], v)
			}
		}
	}
}
