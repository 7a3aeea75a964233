package campaign

import (
	"reflect"
	"testing"
	"time"
)

// TestPowerKey: power.source and power.interval are read, defaulted and
// refused with file:line:col when wrong; neither is in the fingerprint.
func TestPowerKey(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    memFiles
		want     PowerOpts
		wantErrs []string
	}{
		{name: "defaults", files: goodFiles, want: PowerOpts{Source: DefaultPowerSource, Interval: DefaultPowerInterval}},
		{name: "dcgm", files: top("power:\n  source: dcgm\n  interval: 250ms\n"), want: PowerOpts{Source: PowerDCGM, Interval: 250 * time.Millisecond}},
		{name: "off", files: top("power: {source: off}\n"), want: PowerOpts{Source: PowerOff, Interval: DefaultPowerInterval}},
		{name: "wrong", files: top("power:\n  source: ipmi\n  interval: 5s\n"), wantErrs: []string{
			`c/configs/camp.yaml:10:11: power.source: "ipmi": want nvidia-smi, dcgm or off`,
			`c/configs/camp.yaml:11:13: power.interval: 5s is longer than 2s: too few readings per level`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Fatalf("errors:\n got: %q\nwant: %q", errs, tc.wantErrs)
			}
			if c != nil && c.Power != tc.want {
				t.Errorf("power %+v, want %+v", c.Power, tc.want)
			}
		})
	}
	a, _ := loadMem(t, goodFiles)
	b, _ := loadMem(t, top("power: {source: off}\n"))
	if a == nil || b == nil || a.Fingerprint() != b.Fingerprint() {
		t.Errorf("the power source changed the sweep fingerprint")
	}
}
