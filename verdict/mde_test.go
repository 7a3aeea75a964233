package verdict

import (
	"math"
	"testing"
)

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
		{3.19e38, "nothing under a factor of ×1000"},
		{math.Inf(1), "nothing under a factor of ×1000"},
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

// TestMDEShort: a cell's MDE is a figure under 100% and a bound past it:
// with one degree of freedom and Holm over many comparisons it would
// otherwise print as 39 digits.
func TestMDEShort(t *testing.T) {
	for _, tc := range []struct {
		pct  float64
		want string
	}{
		{0, "no MDE"},
		{math.NaN(), "no MDE"},
		{3.44, "MDE 3.4%"},
		{99.94, "MDE 99.9%"},
		{100, "MDE > 100%"},
		{3.19122892730761421224980355810030780416e38, "MDE > 100%"},
		{math.Inf(1), "MDE > 100%"},
	} {
		if got := MDEShort(tc.pct); got != tc.want {
			t.Errorf("MDEShort(%g) = %q, want %q", tc.pct, got, tc.want)
		}
	}
	for _, tc := range []struct {
		pct  float64
		want string
	}{
		{0, "no difference could be detected"},
		{4.04, "differences under ±4.0% could not be detected"},
		{150, "differences under a factor of ×2.5 could not be detected"},
		{3.19e38, "differences under a factor of ×1000 could not be detected"},
	} {
		if got := MDEWords(tc.pct); got != tc.want {
			t.Errorf("MDEWords(%g) = %q, want %q", tc.pct, got, tc.want)
		}
	}
}
