package measure

import (
	"math"
	"testing"
)

// TestLevelITL: a level's ITL percentiles are Percentile's over every gap of
// every successful request inside the steady state, pooled over the
// repeats; the ramp-up's gaps and a failed request's are left out, and
// the CDF agrees with the percentiles at its points.
func TestLevelITL(t *testing.T) {
	var repeats [][]Record
	var want []float64
	for rep := range 2 {
		recs := closedLoop(2, 2, 8, 5, 2e9)
		for i := range recs {
			r := &recs[i]
			r.Repeat = rep
			// The first wave's gaps stand out: they must not be pooled.
			gap := int64(1)
			if i >= 2 {
				gap = int64(20_000 + 1000*i + 100*rep)
			}
			r.ITL = Gaps{gap, gap + 7, gap - 3, gap + 11}
			if i == 5 {
				r.ErrClass = ErrCut
				continue
			}
			if i >= 2 {
				want = append(want, r.ITL.Seconds()...)
			}
		}
		repeats = append(repeats, recs)
	}
	ps := []float64{50, 95, 99.9}
	f := LevelFiguresAt(ConcurrencyLevel(2), ps, repeats...)
	if f.ITL.N != len(want) {
		t.Fatalf("ITL over %d gaps, want %d", f.ITL.N, len(want))
	}
	for _, p := range ps {
		got, ok := f.ITL.At(p)
		if w := Percentile(want, p); !ok || math.Abs(got-w) > 1e-15 {
			t.Errorf("ITL %s = %g (%v), want %g", PercentileName(p), got, ok, w)
		}
	}
	if _, ok := f.ITL.At(97); ok {
		t.Error("ITL has a p97 it was not asked for")
	}
	c := f.ITLCDF
	if c == nil || c.N != len(want) || len(c.P) != len(c.Seconds) {
		t.Fatalf("ITL CDF %+v", c)
	}
	for i, p := range c.P {
		if w := Percentile(want, 100*p); math.Abs(c.Seconds[i]-w) > 1e-15 {
			t.Errorf("CDF at %g = %g, want %g", p, c.Seconds[i], w)
		}
	}
	if f.TTFTCDF == nil || f.TTFTCDF.N != f.TTFT.N {
		t.Errorf("TTFT CDF %+v against %d TTFTs", f.TTFTCDF, f.TTFT.N)
	}
}

// TestLevelITLWithoutGaps: records written before the gaps were kept give
// every other figure as before and no ITL at all.
func TestLevelITLWithoutGaps(t *testing.T) {
	recs := closedLoop(2, 2, 8, 5, 2e9)
	f := LevelFigures(ConcurrencyLevel(2), recs)
	if f.ITL.N != 0 || f.ITLCDF != nil || f.ITL.Percentiles != nil {
		t.Errorf("ITL from records without gaps: %+v %+v", f.ITL, f.ITLCDF)
	}
	if _, ok := f.ITL.At(50); ok {
		t.Error("an empty ITL has a p50")
	}
	if f.TTFT.N != 8 || f.TTFT.Percentiles["p95"] == 0 {
		t.Errorf("TTFT %+v", f.TTFT)
	}
}
