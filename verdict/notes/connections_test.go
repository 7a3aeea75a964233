package notes

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

func TestCheckConnections(t *testing.T) {
	v := &verdict.Verdict{Baseline: "a", Scenarios: []verdict.Scenario{{Name: "a"}, {Name: "b"}}}
	in := records.Input{Launches: verdicttest.OneLaunchEach(map[string][]measure.Record{
		"a": {{Level: measure.ConcurrencyLevel(1)}, {Level: measure.ConcurrencyLevel(1)}},
		"b": {{Level: measure.ConcurrencyLevel(0), Warmup: true, ConnRetries: 1}, {Level: measure.ConcurrencyLevel(1)}, {Level: measure.ConcurrencyLevel(1), ConnRetries: 1}, {Level: measure.ConcurrencyLevel(4), ConnRetries: 1, ErrClass: measure.ErrConnect}},
	})}
	var got []string
	for _, n := range checkConnections(v, in) {
		got = append(got, n.Severity+" "+n.Check+" "+n.Text)
	}
	want := []string{"info connections b: the server closes its kept-alive connections (after each answer, as llama.cpp's llama-server does, or when idle): " +
		"3 of 4 requests found theirs closed before any answer and were sent once more on a new connection (docs/LOADGEN.md)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
