package measure

import (
	"slices"
	"testing"
)

// TestParsePercentiles: names are read strictly, each percentile has one
// name, and a list comes back sorted and written the same.
func TestParsePercentiles(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []float64
		wantErr string
	}{
		{in: "p50,p90,p95,p99", want: []float64{50, 90, 95, 99}},
		{in: "p99.9, p50", want: []float64{50, 99.9}},
		{in: "p0.1", want: []float64{0.1}},
		{in: "p100", wantErr: `"p100": want more than p0 and less than p100`},
		{in: "p0", wantErr: `"p0": want more than p0 and less than p100`},
		{in: "99", wantErr: `"99": want a percentile like p50 or p99.9`},
		{in: "pNaN", wantErr: `"pNaN": want more than p0 and less than p100`},
		{in: "p050", wantErr: `"p050": write it p50`},
		{in: "p99.0", wantErr: `"p99.0": write it p99`},
		{in: "p1e1", wantErr: `"p1e1": write it p10`},
		{in: "p50,p50", wantErr: `p50 repeated`},
		{in: "", wantErr: `"": want a percentile like p50 or p99.9`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParsePercentiles(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParsePercentiles(%q) = %v, %v; want error %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParsePercentiles(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			if back, _ := ParsePercentiles(FormatPercentiles(got)); !slices.Equal(back, got) {
				t.Errorf("%q does not read back", FormatPercentiles(got))
			}
		})
	}
}
