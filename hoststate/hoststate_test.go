package hoststate

import (
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
