package verdict

import "testing"

// TestMDEText: a detectable difference under 100% reads as ±x%; past it
// (a capacity whose interval spans orders of magnitude) as a factor, never
// as "±57913.7%".
func TestMDEText(t *testing.T) {
	for _, tc := range []struct {
		pct  float64
		want string
	}{
		{3.44, "±3.4%"},
		{99.9, "±99.9%"},
		{100, "only a factor beyond ×2"},
		{57913.7, "only a factor beyond ×580"},
	} {
		if got := MDEText(tc.pct); got != tc.want {
			t.Errorf("MDEText(%g) = %q, want %q", tc.pct, got, tc.want)
		}
	}
	if got := (Comparison{MDEPct: 0}).MDEClause(); got != "could detect no difference" {
		t.Errorf("no estimate: %q", got)
	}
	if got := (Comparison{MDEPct: 57913.7}).MDEClause(); got != "could detect only a factor beyond ×580" {
		t.Errorf("huge: %q", got)
	}
}
