package notes_test

import (
	"math"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestITLFromRecords: records that keep their gaps give each level an ITL at
// the run's percentiles, Percentile's over the pooled steady-state gaps;
// records without them give none, and a note says why.
func TestITLFromRecords(t *testing.T) {
	sw := verdicttest.DefaultSweep()
	sw.Concurrency = []int{4}
	old := verdicttest.Simulate(verdicttest.Baseline, sw, 1)
	withGaps := verdicttest.Simulate(verdicttest.Baseline, sw, 2)
	for i := range withGaps {
		withGaps[i].ITL = measure.Gaps{int64(1000 + i), int64(2000 + i), int64(1500 + 3*i)}
	}
	in := records.Input{Manifest: results.Manifest{Baseline: "old", Sweep: results.SweepInfo{Percentiles: []float64{75, 99.9}}},
		Launches: map[string][]records.Launch{"old": {{Round: 1, Records: old}}, "new": {{Round: 1, Records: withGaps}}}}
	v, err := judge.Records(in, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Percentiles) != 2 || v.Percentiles[1] != 99.9 {
		t.Errorf("percentiles %v, want the manifest's", v.Percentiles)
	}
	l := v.Scenario("new").Level(measure.ConcurrencyLevel(4))
	var recs []measure.Record
	for _, r := range withGaps {
		if !r.Warmup {
			recs = append(recs, r)
		}
	}
	want := measure.SteadyITL(measure.ConcurrencyLevel(4), recs)
	got, ok := l.ITL.At(99.9)
	if w := measure.Percentile(want, 99.9); !ok || len(want) == 0 || math.Abs(got-w) > 1e-15 {
		t.Errorf("ITL p99.9 = %g (%v), want %g over %d gaps", got, ok, w, len(want))
	}
	if l := v.Scenario("old").Level(measure.ConcurrencyLevel(4)); l.ITL.N != 0 {
		t.Errorf("ITL from records without gaps: %+v", l.ITL)
	}
	var notes []string
	for _, n := range v.Notes {
		if n.Check == verdict.CheckITL {
			notes = append(notes, n.Text)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "no ITL figures for old:") {
		t.Errorf("ITL notes %q", notes)
	}
}
