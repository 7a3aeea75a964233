package hoststate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// h200Row is the H200's query in testdata/h200 (driver 580.159.04): the
// field names from query.csv's header, the values from
// query-nounits.csv, both as nvidia-smi printed them.
func h200Row(t *testing.T) ([]string, string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "h200", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(b), "\n")[0]
	}
	return strings.Split(read("query.csv"), ", "), read("query-nounits.csv")
}

// TestParseGPUsH200: a real H200's answer, read by the names its header
// gives (clocks.current.sm, clocks_event_reasons.active, enforced.power.limit):
// the fields bakeoff reads are read, the others (name, memory) skipped.
func TestParseGPUsH200(t *testing.T) {
	fields, row := h200Row(t)
	gpus, driver, err := ParseGPUs(fields, row)
	if err != nil {
		t.Fatal(err)
	}
	if driver != "580.159.04" || len(gpus) != 1 {
		t.Fatalf("driver %q, %d GPUs", driver, len(gpus))
	}
	g := gpus[0]
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"SM clock", *g.SMMHz, 345},
		{"memory clock", *g.MemMHz, 3201},
		{"max SM clock", *g.MaxSMMHz, 1980},
		{"max memory clock", *g.MaxMemMHz, 3201},
		{"temperature", *g.TempC, 34},
		{"power", *g.PowerW, 77.86},
		{"power limit", *g.PowerLimitW, 700.0},
		{"reasons", *g.Reasons, ReasonGPUIdle},
		{"ECC", *g.ECCUncorrected, int64(0)},
		{"persistence", *g.Persistence, true},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	if g.Counters != nil {
		t.Errorf("counters %+v from a query that asked for none", g.Counters)
	}
}

// TestParseGPUsQueried: the rows of Command's two queries, by position,
// with fields a GPU does not report left out, not failed.
func TestParseGPUsQueried(t *testing.T) {
	names := func(fs []gpuField) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.names[0])
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		fields []gpuField
		out    string
		check  func(t *testing.T, gs []GPU)
		err    string
	}{
		{"new driver, two GPUs, one hot", queryNew,
			"0, 580.159.04, 1980, 3201, 1980, 3201, 61, 690.12, 700.00, 0, Enabled, 0x0000000000000004, 1200, 0, 0, 0\n" +
				"1, 580.159.04, 990, 3201, 1980, 3201, 92, 410.50, 700.00, 0, Enabled, 0x0000000000000048, 0, 0, 3500000, 0\n",
			func(t *testing.T, gs []GPU) {
				if len(gs) != 2 || gs[1].Index != 1 || *gs[1].Reasons != ReasonHWSlowdown|ReasonHWThermalSlowdown ||
					gs[1].Counters.HWThermalSlowdown != 3500000 || gs[0].Counters.SWPowerCap != 1200 {
					t.Errorf("%+v", gs)
				}
			}, ""},
		{"old driver, no ECC, no power readings", queryOld,
			"0, 470.82.01, 1410, 1215, 1410, 1215, 40, [N/A], [Not Supported], [N/A], Disabled, 0x0000000000000001\n",
			func(t *testing.T, gs []GPU) {
				g := gs[0]
				if g.PowerW != nil || g.PowerLimitW != nil || g.ECCUncorrected != nil || *g.Persistence || g.Counters != nil || *g.Reasons != ReasonGPUIdle {
					t.Errorf("%+v", g)
				}
			}, ""},
		{"a row short of fields", queryOld, "0, 470.82.01, 1410\n", nil, "3 fields, want 12"},
		{"a number that is not", queryOld, "0, 470.82.01, fast, 1215, 1410, 1215, 40, 1, 1, 0, Enabled, 0x1\n", nil, `clocks.sm "fast"`},
		{"persistence in other words", queryOld, "0, 470.82.01, 1410, 1215, 1410, 1215, 40, 1, 1, 0, On, 0x1\n", nil, "want Enabled or Disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs, _, err := ParseGPUs(names(tc.fields), tc.out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, gs)
		})
	}
}

// TestQueriesKnownToTheDriver: every field Command queries is one the
// H200's driver lists in --help-query-gpu, so a driver of that age answers
// the newer query; the older query names the reasons the old way.
func TestQueriesKnownToTheDriver(t *testing.T) {
	help, err := os.ReadFile(filepath.Join("testdata", "h200", "help-query-gpu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range allFields() {
		if !strings.Contains(string(help), `"`+f.names[0]+`"`) {
			t.Errorf("%s is not in nvidia-smi --help-query-gpu", f.names[0])
		}
	}
	if !strings.Contains(queryArg(queryOld), "clocks_throttle_reasons.active") || strings.Contains(queryArg(queryOld), "counters") {
		t.Errorf("the older query: %s", queryArg(queryOld))
	}
}

func TestReasonsWords(t *testing.T) {
	for _, tc := range []struct {
		r    Reasons
		want string
	}{
		{0, "none"},
		{ReasonGPUIdle, "idle"},
		{0x48, "HW slowdown, HW thermal slowdown"},
		{ReasonSWPowerCap | ReasonSWThermalSlowdown | ReasonHWPowerBrakeSlowdown, "SW power cap, SW thermal slowdown, HW power brake slowdown"},
		{0x1000, "reason 0x1000"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%#x: %q, want %q", uint64(tc.r), got, tc.want)
		}
	}
}

// TestParseH200Reading: Command's answer on a real H200 host (driver
// 580.159.04, 16 CPUs, the GPU idle): the newer query answered, with the
// clock event counters, and nothing disturbed.
func TestParseH200Reading(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "h200", "reading.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if s.CPUs != 16 || s.UptimeS != 27.75 || s.Driver != "580.159.04" || len(s.GPUs) != 1 {
		t.Fatalf("%+v", s)
	}
	g := s.GPUs[0]
	if *g.TempC != 45 || *g.PowerLimitW != 700 || *g.Reasons != ReasonGPUIdle || g.Counters == nil || *g.Counters != (Counters{}) {
		t.Errorf("%+v", g)
	}
	l := &Launch{Before: &s, After: &s}
	if d := l.Disturbed(); d != "" {
		t.Errorf("an idle H200 disturbed: %q", d)
	}
}
