package rundiff

import (
	"testing"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestUncompared: a diff says why a level both runs measured was not
// compared, naming the run whose server could not keep up.
func TestUncompared(t *testing.T) {
	for _, tt := range []struct {
		old, new bool
		want     string
	}{
		{true, true, "saturated in both runs (not compared)"},
		{true, false, "saturated in OLD (not compared)"},
		{false, true, "saturated in NEW (not compared)"},
		{false, false, "no throughput in one run"},
	} {
		if got := uncompared(&verdict.Level{Saturated: tt.old}, &verdict.Level{Saturated: tt.new}); got != tt.want {
			t.Errorf("saturated old %v new %v: %q, want %q", tt.old, tt.new, got, tt.want)
		}
	}
}
