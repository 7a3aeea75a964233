package report

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestNumTicks: ticks at a round step, labelled with the digits the step
// needs: no "1250.00", and whole numbers for counts.
func TestNumTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi   float64
		integer  bool
		fromZero bool
		want     string
	}{
		{0, 1234, false, true, "0 250 500 750 1000 1250"},
		{0.62, 1.07, false, false, "0.6 0.7 0.8 0.9 1.0 1.1"},
		{0.93, 1.06, false, false, "0.90 0.95 1.00 1.05 1.10"},
		{0, 2.2, true, true, "0 1 2 3"},
		{0, 11, true, true, "0 2 4 6 8 10 12"},
		{0, 0.037, false, true, "0.00 0.01 0.02 0.03 0.04"},
		{12000, 35300, false, false, "10000 15000 20000 25000 30000 35000 40000"},
		{5, 5, false, false, "5.0 5.2 5.4 5.6 5.8 6.0"},
	} {
		var a plot.Axis
		fitAxis(&a, tc.lo, tc.hi, tc.fromZero, tc.integer)
		var got []string
		for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
			got = append(got, tk.Label)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("[%g, %g] integer %v: ticks %q, want %q", tc.lo, tc.hi, tc.integer, g, tc.want)
		}
		if a.Min > tc.lo && !tc.fromZero || a.Max < tc.hi {
			t.Errorf("[%g, %g]: the axis runs %g to %g, short of the data", tc.lo, tc.hi, a.Min, a.Max)
		}
	}
}

// TestCDFAxisEndsAtTail: one stall of 2 s among ten thousand values of 10
// to 20 ms does not stretch the CDF's axis to 2 s: it ends a step past the
// p99.9, in ms, and starts a step under the data, which sit far from 0.
func TestCDFAxisEndsAtTail(t *testing.T) {
	var xs []float64
	for i := range 9999 {
		xs = append(xs, 0.010+0.010*float64(i)/9999)
	}
	xs = append(xs, 2)
	c := measure.ConcurrencyLevel(8)
	v := &verdict.Verdict{Campaign: "tail", Levels: []measure.Level{c}, Scenarios: []verdict.Scenario{
		{Name: "a", Levels: []verdict.Level{{Level: c, Figures: measure.Figures{TTFTCDF: measure.CDFOf(xs)}}}}}}
	ch, ok, err := cdfPlot(v, cdfMetrics[0], c)
	if err != nil || !ok {
		t.Fatalf("no plot: %v", err)
	}
	if x := ch.p.X; x.Min < 5 || x.Min > 10 || x.Max < 20 || x.Max > 25 || !strings.Contains(x.Label.Text, "(ms)") {
		t.Errorf("the axis %q runs %g to %g; want 5–10 to 20–25 ms", x.Label.Text, x.Min, x.Max)
	}
}
