package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// busyLaunchSigma is the launch-to-launch variation of the demo's
// scenarios on a busy 2-core host: the A/A pair's MDE is then 19% at every
// level, while EAGLE-3 loses by 35–63% under load.
const busyLaunchSigma = 0.06

// busyRun is `make demo` on a busy host: its four scenarios and six
// levels, its sequential plan's eight rounds at most, each launch's sweep
// read at load 8.8 before and 9.4 after with some task waiting for a CPU
// 61% of the time, when loaded is set.
func busyRun(t *testing.T, loaded bool) *results.Run {
	t.Helper()
	const rounds = 8
	s := demoSweep()
	scs := demoScenarios()
	engines := make([]verdicttest.Engine, len(scs))
	names := make([]string, len(scs))
	for i, sc := range scs {
		engines[i], names[i] = sc.engine, sc.name
		engines[i].LaunchSigma = busyLaunchSigma
	}
	per := make([][][]measure.Record, len(scs))
	for i := range per {
		per[i] = make([][]measure.Record, rounds)
	}
	for _, l := range verdicttest.Campaign(engines, s, rounds, 3) {
		per[l.Scenario][l.Round-1] = l.Records
	}
	m := verdicttest.Manifest("demo", "20260101T000000Z", "sha256:aaaa", names[0], s, names...)
	m.Rounds = rounds
	out := make([]verdicttest.Scenario, len(scs))
	for i := range scs {
		out[i] = verdicttest.Scenario{Name: names[i], Rounds: per[i]}
	}
	run, err := verdicttest.WriteRun(t.TempDir(), m, out)
	if err != nil {
		t.Fatal(err)
	}
	if loaded {
		psi := 61.0
		for i := range run.Summary.Scenarios {
			run.Summary.Scenarios[i].HostState = &hoststate.Launch{
				Before: &hoststate.State{Load1: 8.8, CPUSome10: &psi}, After: &hoststate.State{Load1: 9.4, CPUSome10: &psi}}
		}
	}
	return run
}

// busyVerdict is busyRun's verdict under the demo's sequential plan.
func busyVerdict(t *testing.T, loaded bool) *verdict.Verdict {
	t.Helper()
	v, err := judge.Run(busyRun(t, loaded), verdict.Options{Sequential: &verdict.SequentialPlan{MinRounds: 3, MaxRounds: 8}})
	if err != nil {
		t.Fatal(err)
	}
	v.Dir = ""
	return v
}

// TestEndOnABusyHost is the end of the demo's run on a busy host, a golden
// file: the A/A pair stays "?" at every level, yet the winner column says
// that EAGLE-3 is behind from C=2 on; each decided cell shows its own
// adjusted p rather than one close call's; a line under the table says that
// nothing could be tied, with the MDEs and the host's load.
func TestEndOnABusyHost(t *testing.T) {
	v := busyVerdict(t, true)
	var buf bytes.Buffer
	if err := End(&buf, v, DefaultWidth, endWhere); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	golden.Check(t, filepath.Join("testdata", "end-busy.txt"), buf.Bytes())
	if !strings.Contains(got, "nothing could be tied") || !strings.Contains(got, "load 9.1") {
		t.Errorf("the end does not say that nothing could be tied on a host at load 9.1:\n%s", got)
	}
	var md bytes.Buffer
	if err := Markdown(&md, v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), untiedLine(v)) {
		t.Errorf("verdict.md does not say that nothing could be tied:\n%s", md.String())
	}
	behind, ps := 0, map[string]int{}
	for _, row := range v.Rows {
		if strings.Contains(winnerCell(row, v.Baseline), "behind") {
			behind++
		}
		for _, c := range row.Cells {
			if c.Compared && (c.Outcome == verdict.OutcomeFaster || c.Outcome == verdict.OutcomeSlower) {
				ps[verdict.PClause(c.PAdjusted)]++
			}
		}
	}
	if behind < 4 {
		t.Errorf("%d levels say who is behind, want the four or more where EAGLE-3 lost", behind)
	}
	for p, n := range ps {
		// Raised to the close call at C=10 after round 5, six cells read
		// p=0.043.
		if n > 2 {
			t.Errorf("%d decided cells show %s: an earlier close call's p is theirs again", n, p)
		}
	}
}

// TestUntiedLine: the line under the table says that nothing could be tied
// only when it is so: no comparison tied, some were left "?", and every
// one of those has a tie interval wider than the whole ±margin band. It
// quotes the host's load when the run recorded it.
func TestUntiedLine(t *testing.T) {
	busy := busyVerdict(t, true)
	unloaded := busyVerdict(t, false)
	quiet, _ := testVerdict(t)
	// narrow is the busy verdict with one "?" whose interval fits the
	// band: a tie was possible there, had its estimate fallen inside.
	narrow := *busy
	narrow.Rows = cloneRows(busy.Rows)
	for i := range narrow.Rows[0].Cells {
		if c := &narrow.Rows[0].Cells[i]; c.Compared && c.Outcome == verdict.OutcomeInconclusive {
			c.OutcomeLo, c.OutcomeHi = 1.005, 1.03
			break
		}
	}
	for _, tc := range []struct {
		name string
		v    *verdict.Verdict
		want string
	}{
		{"a busy host", busy, "nothing could be tied: the noise left every ? with a 90% interval wider than the ±2% band a tie needs (MDE 18.8% to 26.9%); the host ran at load 9.1 around its sweeps, some task waiting for a CPU 61% of the time"},
		{"no host readings", unloaded, "nothing could be tied: the noise left every ? with a 90% interval wider than the ±2% band a tie needs (MDE 18.8% to 26.9%)"},
		{"some comparisons tied", quiet, ""},
		{"one could have tied", &narrow, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := untiedLine(tc.v); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// cloneRows copies rows deeply enough to change a cell.
func cloneRows(rows []verdict.Row) []verdict.Row {
	out := make([]verdict.Row, len(rows))
	for i, r := range rows {
		r.Cells = append([]verdict.Cell(nil), r.Cells...)
		out[i] = r
	}
	return out
}
