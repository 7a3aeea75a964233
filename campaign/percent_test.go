package campaign

import (
	"strings"
	"testing"
)

// TestParsePercent: one rule for configs and flags. A % sign or a bare
// number of 1 or more is percent; a bare number between 0 and 1 is refused
// as ambiguous, naming both readings.
func TestParsePercent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  string
	}{
		{"3%", 3, ""},
		{"3", 3, ""},
		{" 2.5 % ", 2.5, ""},
		{"0.5%", 0.5, ""},
		{"0", 0, ""},
		{"0.03", 0, "0.03 is ambiguous: write 3% for a fraction of 0.03, or 0.03% for 0.03 percent"},
		{"100%", 0, "100% is outside 0%-100%"},
		{"-1", 0, "-1% is outside"},
		{"x", 0, `"x" is not a percentage`},
		{"NaN%", 0, "not a percentage"},
	} {
		got, err := ParsePercent(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParsePercent(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParsePercent(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
		case tc.err == "" && got != tc.want:
			t.Errorf("ParsePercent(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
