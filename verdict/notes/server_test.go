package notes

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestCheckServer notes a level whose server and client throughputs differ
// by more than 5%, and says so when every level agrees.
func TestCheckServer(t *testing.T) {
	c4 := measure.ConcurrencyLevel(4)
	launch := func(client, server float64) records.Launch { return verdicttest.ServerLaunch(c4, client, server, 4) }
	cases := []struct {
		name       string
		launches   []records.Launch
		severity   string
		wantInText string
	}{
		{"agree", []records.Launch{launch(100, 103), launch(100, 99)}, verdict.SeverityInfo, "agrees"},
		{"server counts more", []records.Launch{launch(100, 110), launch(100, 108)}, verdict.SeverityWarn, "+9.0%"},
		{"server counts less", []records.Launch{launch(100, 90)}, verdict.SeverityWarn, "-10.0%"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := &verdict.Verdict{Scenarios: []verdict.Scenario{{Name: "a", Levels: []verdict.Level{{Level: c4}}}}}
			in := records.Input{Launches: map[string][]records.Launch{"a": c.launches}}
			notes := checkServer(v, in)
			if len(notes) != 1 || notes[0].Severity != c.severity || !strings.Contains(notes[0].Text, c.wantInText) {
				t.Fatalf("notes %+v, want one %s note with %q", notes, c.severity, c.wantInText)
			}
		})
	}
}
