package explain

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestServerLevel: a level's server summary is the launches' own, averaged,
// with its source kept.
func TestServerLevel(t *testing.T) {
	c4 := measure.ConcurrencyLevel(4)
	s := serverLevel([]records.Launch{verdicttest.ServerLaunch(c4, 100, 103, 3), verdicttest.ServerLaunch(c4, 100, 99, 5)}, c4)
	if s == nil || s.Running == nil || s.Running.Mean != 4 || s.GenTokS == nil || s.GenTokS.Value != 101 ||
		!strings.Contains(s.GenTokS.Source, "rate(g)") {
		t.Errorf("server level %+v", s)
	}
	if s := serverLevel(nil, c4); s != nil {
		t.Errorf("no launches: %+v, want nil", s)
	}
}
