package hoststate

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		load      float64
		runnable  int
		psi       float64 // -1: none
		err       string
	}{
		{"with PSI", "#loadavg\n9.12 4.50 1.20 12/345 6789\n#pressure\nsome avg10=31.50 avg60=20.00 avg300=5.00 total=123\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			9.12, 12, 31.5, ""},
		{"without PSI", "#loadavg\n0.40 0.30 0.20 1/200 42\n#pressure\n", 0.4, 1, -1, ""},
		{"no loadavg", "#loadavg\n#pressure\n", 0, 0, -1, "no /proc/loadavg"},
		{"garbled", "#loadavg\nx y z w\n", 0, 0, -1, `/proc/loadavg: "x y z w"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || s.Load1 != tc.load || s.Runnable != tc.runnable || (s.CPUSome10 == nil) != (tc.psi < 0) ||
				(s.CPUSome10 != nil && *s.CPUSome10 != tc.psi) {
				t.Errorf("%+v, %v", s, err)
			}
		})
	}
}

// TestParseGPUSection: the GPU side of a reading, from either query or
// neither: a refusal keeps the CPU side and says what nvidia-smi said.
func TestParseGPUSection(t *testing.T) {
	cpu := "#loadavg\n0.40 0.30 0.20 1/200 42\n#pressure\n#cpus\n16\n#uptime\n3600.25 50000.00\n"
	for _, tc := range []struct {
		name, gpu string
		gpus      int
		err       string
	}{
		{"none asked", "", 0, ""},
		{"newer", "#gpu new\n0, 580.159.04, 345, 3201, 1980, 3201, 34, 77.86, 700.00, 0, Enabled, 0x1, 0, 0, 0, 0\n", 1, ""},
		{"older", "#gpu old\n0, 470.82.01, 1410, 1215, 1410, 1215, 40, 61.00, 400.00, 0, Enabled, 0x1\n1, 470.82.01, 1410, 1215, 1410, 1215, 40, 61.00, 400.00, 0, Enabled, 0x1\n", 2, ""},
		{"refused", "#gpu exit 2\nField \"clocks_throttle_reasons.active\" is not a valid field to query.\n", 0,
			`nvidia-smi --query-gpu: exit status 2: Field "clocks_throttle_reasons.active" is not a valid field to query.`},
		{"garbled", "#gpu old\nNo devices were found\n", 0, `nvidia-smi --query-gpu: "No devices were found": 1 fields, want 12`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(cpu + tc.gpu)
			var ge *GPUError
			if tc.err != "" {
				if !errors.As(err, &ge) || err.Error() != tc.err {
					t.Fatalf("error %v, want %s", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if s.Load1 != 0.4 || s.CPUs != 16 || s.UptimeS != 3600.25 || len(s.GPUs) != tc.gpus {
				t.Errorf("%+v", s)
			}
		})
	}
}

// TestKeepGPUs: a launch sharing its host keeps its own GPUs' state.
func TestKeepGPUs(t *testing.T) {
	s := &State{GPUs: []GPU{{Index: 0}, {Index: 1}, {Index: 2}}}
	s.KeepGPUs(nil)
	if len(s.GPUs) != 3 {
		t.Fatalf("nil kept %d GPUs", len(s.GPUs))
	}
	s.KeepGPUs([]int{2, 0})
	if len(s.GPUs) != 2 || s.GPUs[0].Index != 0 || s.GPUs[1].Index != 2 {
		t.Errorf("%+v", s.GPUs)
	}
}

func TestParseFacts(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      Facts
		err       string
	}{
		{"with cpufreq", "#node\ngpu-07\n#kernel\n6.8.0-49-generic\n#governor\nperformance\n", Facts{"gpu-07", "6.8.0-49-generic", "performance"}, ""},
		{"a VM without it", "#node\nvm\n#kernel\n6.18.44-fc-v1272\n#governor\n", Facts{"vm", "6.18.44-fc-v1272", ""}, ""},
		{"no uname", "#node\n#kernel\n#governor\n", Facts{}, "no node name or kernel release"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFacts(tc.out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || f != tc.want {
				t.Errorf("%+v, %v", f, err)
			}
		})
	}
}

func TestLoadDiffers(t *testing.T) {
	st := func(v float64) *State { return &State{Load1: v} }
	quiet := Summarize([]*Launch{{Before: st(0.3), After: st(0.5)}, {Before: st(0.4)}})
	busy := Summarize([]*Launch{{Before: st(9), After: st(9.2)}, {After: st(8)}})
	if got := LoadDiffers(quiet, busy); !strings.Contains(got, "the new run ran on a busier host: load 8.6 against 0.4") {
		t.Errorf("%q", got)
	}
	if got := LoadDiffers(busy, quiet); !strings.HasPrefix(got, "the old run") {
		t.Errorf("%q", got)
	}
	if got := LoadDiffers(quiet, Summarize([]*Launch{{Before: st(1.2)}})); got != "" {
		t.Errorf("within one task: %q", got)
	}
	if got := LoadDiffers(quiet, Summarize(nil)); got != "" {
		t.Errorf("no reading: %q", got)
	}
}
