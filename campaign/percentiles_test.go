package campaign

import (
	"reflect"
	"strings"
	"testing"
)

// TestPercentilesKey: sweep.percentiles is read strictly, sorted, refused
// with file:line:col when wrong, and kept out of the fingerprint.
func TestPercentilesKey(t *testing.T) {
	with := func(list string) memFiles {
		cfg := strings.Replace(goodFiles[cfgPath], "  max_tokens: 50\n", "  max_tokens: 50\n  percentiles: "+list+"\n", 1)
		return goodFiles.with(memFiles{cfgPath: cfg})
	}
	for _, tc := range []struct {
		name     string
		files    memFiles
		want     []float64
		wantErrs []string
	}{
		{name: "absent", files: goodFiles},
		{name: "sorted", files: with("[p99.9, p50, p95]"), want: []float64{50, 95, 99.9}},
		{name: "not a name", files: with("[p50, 99]"),
			wantErrs: []string{`c/configs/camp.yaml:7:22: sweep.percentiles[1]: want a percentile like p50 or p99.9, got "99"`}},
		{name: "out of range", files: with("[p100]"),
			wantErrs: []string{`c/configs/camp.yaml:7:17: sweep.percentiles[0]: "p100": want more than p0 and less than p100`}},
		{name: "two names for one", files: with("[p99.0]"),
			wantErrs: []string{`c/configs/camp.yaml:7:17: sweep.percentiles[0]: "p99.0": write it p99`}},
		{name: "repeated", files: with("[p50, p50]"),
			wantErrs: []string{`c/configs/camp.yaml:7:22: sweep.percentiles[1]: p50 repeated (first at line 7)`}},
		{name: "not a list", files: with("p50"),
			wantErrs: []string{`c/configs/camp.yaml:7:16: sweep.percentiles: want a list of percentiles like [p50, p90, p99], got "p50"`}},
		{name: "empty", files: with("[]"),
			wantErrs: []string{`c/configs/camp.yaml:7:16: sweep.percentiles: empty list (at least one percentile)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Fatalf("errors:\n got: %q\nwant: %q", errs, tc.wantErrs)
			}
			if c == nil {
				return
			}
			if !reflect.DeepEqual(c.Sweep.Percentiles, tc.want) {
				t.Errorf("percentiles = %v, want %v", c.Sweep.Percentiles, tc.want)
			}
		})
	}
}

// TestPercentilesNotInFingerprint: the percentiles change how the records
// are read, not one request, so runs that differ only in them compare.
func TestPercentilesNotInFingerprint(t *testing.T) {
	a, _ := loadMem(t, goodFiles)
	cfg := strings.Replace(goodFiles[cfgPath], "  max_tokens: 50\n", "  max_tokens: 50\n  percentiles: [p75]\n", 1)
	b, _ := loadMem(t, goodFiles.with(memFiles{cfgPath: cfg}))
	if a == nil || b == nil {
		t.Fatal("load failed")
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Errorf("the percentiles changed the sweep fingerprint")
	}
}
