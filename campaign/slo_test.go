package campaign

import (
	"reflect"
	"testing"

	"github.com/bakeoff-dev/bakeoff/slo"
)

// TestSLOKey: the objective's bounds are read as durations and min_success
// as a fraction, and refused with file:line:col when wrong.
func TestSLOKey(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    memFiles
		want     *slo.SLO
		wantErrs []string
	}{
		{name: "absent", files: goodFiles},
		{name: "every bound", files: top("slo:\n  ttft_p99: 2s\n  tpot_p99: 60ms\n  itl_p99: 200ms\n  e2e_p99: 1m\n  min_success: 0.995\n"),
			want: &slo.SLO{Bounds: map[string]float64{slo.TTFT: 2, slo.TPOT: 0.06, slo.ITL: 0.2, slo.E2E: 60}, MinSuccess: 0.995}},
		{name: "min_success as a percentage", files: top("slo: {tpot_p99: 50ms, min_success: 99.9%}\n"),
			want: &slo.SLO{Bounds: map[string]float64{slo.TPOT: 0.05}, MinSuccess: 0.999}},
		{name: "min_success alone", files: top("slo: {min_success: 1}\n"),
			want: &slo.SLO{MinSuccess: 1}},
		{name: "any percentile", files: top("slo:\n  ttft_p90: 1s\n  itl_p95: 50ms\n  tpot_p99.9: 80ms\n"),
			want: &slo.SLO{Bounds: map[string]float64{"ttft_p90": 1, "itl_p95": 0.05, "tpot_p99.9": 0.08}}},
		{name: "unknown metric", files: top("slo:\n  ttfx_p99: 2s\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:3: slo: unknown key "ttfx_p99" (known: METRIC_pN with METRIC one of ttft, tpot, itl, e2e and pN a percentile (itl_p95, ttft_p99.9); and min_success)`}},
		{name: "bad percentiles", files: top("slo:\n  itl_p100: 2s\n  ttft_p050: 1s\n  e2e: 1s\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:3: slo: itl_p100: "p100": want more than p0 and less than p100`,
				`c/configs/camp.yaml:11:3: slo: ttft_p050: "p050": write it p50`,
				`c/configs/camp.yaml:12:3: slo: unknown key "e2e" (known: METRIC_pN with METRIC one of ttft, tpot, itl, e2e and pN a percentile (itl_p95, ttft_p99.9); and min_success)`}},
		{name: "a bare number", files: top("slo:\n  ttft_p99: 2\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:13: slo.ttft_p99: unparsable duration "2" (want e.g. 200ms, 30s, 5m, 1h30m)`}},
		{name: "zero and negative", files: top("slo:\n  ttft_p99: 0s\n  tpot_p99: -5ms\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:13: slo.ttft_p99: must be longer than 0, got 0s`,
				`c/configs/camp.yaml:11:13: slo.tpot_p99: must be longer than 0, got -5ms`}},
		{name: "min_success out of range", files: top("slo:\n  min_success: 1.5\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:16: slo.min_success: want a fraction in (0, 1] like 0.99 (or 99%), got 1.5`}},
		{name: "not a mapping", files: top("slo: 2s\n"),
			wantErrs: []string{"c/configs/camp.yaml:9:6: slo: want a mapping of bounds (e.g. {ttft_p99: 2s, tpot_p99: 60ms}), got \"2s\""}},
		{name: "empty", files: top("slo: {}\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:6: slo: empty; give at least one bound (METRIC_pN with METRIC one of ttft, tpot, itl, e2e and pN a percentile (itl_p95, ttft_p99.9)) or min_success`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Fatalf("errors:\n got: %q\nwant: %q", errs, tc.wantErrs)
			}
			if c == nil {
				return
			}
			if !reflect.DeepEqual(c.SLO, tc.want) {
				t.Errorf("slo = %+v, want %+v", c.SLO, tc.want)
			}
		})
	}
}

// TestSLONotInFingerprint: the objective judges the measurements, it does
// not shape them; runs under different objectives can be compared.
func TestSLONotInFingerprint(t *testing.T) {
	a, _ := loadMem(t, goodFiles)
	b, _ := loadMem(t, goodFiles.with(memFiles{cfgPath: goodFiles[cfgPath] + "slo: {ttft_p99: 2s}\n"}))
	if a == nil || b == nil {
		t.Fatal("load failed")
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Errorf("the slo changed the sweep fingerprint")
	}
}
