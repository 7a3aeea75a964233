package timeline

import (
	"math"
	"testing"
)

// sec is seconds as Unix ns after an arbitrary epoch.
func sec(s float64) int64 { return 1_700_000_000_000_000_000 + int64(s*1e9) }

func secs(ss ...float64) []int64 {
	out := make([]int64, len(ss))
	for i, s := range ss {
		out[i] = sec(s)
	}
	return out
}

// TestIncrease checks Increase against values worked out by hand from
// Prometheus' extrapolatedRate.
func TestIncrease(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name       string
		at         []int64
		vals       []float64
		start, end float64
		want       float64
		ok         bool
	}{
		// raw 30 over 3 s; both edges 0.5 s away (< 1.1 intervals): ×4/3.
		{"steady, extrapolated to both edges", secs(1, 2, 3, 4), []float64{10, 20, 30, 40}, 0.5, 4.5, 40, true},
		// 15 − 10 + 20 (the value before the reset) = 25, ×4/3.
		{"reset in the middle", secs(1, 2, 3, 4), []float64{10, 20, 5, 15}, 0.5, 4.5, 100.0 / 3, true},
		// Resets at 20→15 and 15→3: 3 − 10 + 20 + 15 = 28, ×4/3.
		{"two resets", secs(1, 2, 3, 4), []float64{10, 20, 15, 3}, 0.5, 4.5, 28 * 4.0 / 3, true},
		// Scrapes straddle both edges: only 2 s and 3 s are inside;
		// 10 × (1 + 0.5 + 0.7) / 1, exactly the linear counter's increase.
		{"scrapes straddling the edges", secs(0, 1, 2, 3, 4, 5), []float64{0, 10, 20, 30, 40, 50}, 1.5, 3.7, 22, true},
		// The range is left-open: the sample at the start is out; 10 × (1+1)/1.
		{"sample on the start edge left out", secs(1, 2, 3), []float64{10, 20, 30}, 1, 3, 20, true},
		// Starts inside the window: half an interval (0.5 s) would cross
		// zero, so the start is the zero point, 0.3 s before: 20 × 2.3/2.
		{"series starting inside, not below zero", secs(5, 6, 7), []float64{3, 13, 23}, 0, 7, 23, true},
		// Ends long before the window does: half an interval at the end.
		{"series ending inside", secs(1, 2), []float64{10, 20}, 0.5, 5, 20, true},
		{"NaN scrapes skipped", secs(1, 2, 3, 4), []float64{10, nan, 30, 40}, 0.5, 4.5, 40, true},
		{"one sample", secs(1, 5), []float64{10, 20}, 0.5, 4, 0, false},
		{"none", nil, nil, 0, 4, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Increase(c.at, c.vals, sec(c.start), sec(c.end))
			if ok != c.ok || math.Abs(got-c.want) > 1e-9*max(1, c.want) {
				t.Errorf("Increase = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestRawIncrease(t *testing.T) {
	got, ok := rawIncrease(secs(1, 2, 3, 4), []float64{10, 20, 5, 15}, sec(0), sec(4))
	if !ok || got != 25 {
		t.Errorf("rawIncrease = %v, %v; want 25 (15 − 10 + 20 before the reset)", got, ok)
	}
}

// TestBucketQuantile checks histogram_quantile's rules on hand-made buckets.
func TestBucketQuantile(t *testing.T) {
	inf := math.Inf(1)
	bs := []bucket{{0.4, 8}, {0.1, 2}, {inf, 10}, {0.2, 6}}
	cases := []struct {
		q, want float64
	}{
		{0.5, 0.175}, // rank 5 in (0.1, 0.2]: 0.1 + 0.1 × 3/4
		{0.1, 0.05},  // rank 1 in the first bucket, which starts at 0
		{0.99, 0.4},  // rank 9.9 in +Inf: the highest finite bound
	}
	for _, c := range cases {
		if got := bucketQuantile(c.q, bs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("q%v = %v, want %v", c.q, got, c.want)
		}
	}
	if got := bucketQuantile(0.5, []bucket{{0.1, 0}, {inf, 0}}); !math.IsNaN(got) {
		t.Errorf("no observations: %v, want NaN", got)
	}
	if got := bucketQuantile(0.5, []bucket{{0.1, 3}, {0.2, 4}}); !math.IsNaN(got) {
		t.Errorf("no +Inf bucket: %v, want NaN", got)
	}
}
