package timeline

import (
	"slices"
	"testing"
)

// TestGaugeSeries: a gauge's values within the window, summed or averaged
// over its series at each scrape, the first name the timeline has; a scrape
// that carries none of them is left out.
func TestGaugeSeries(t *testing.T) {
	g := func(name, rank string, v float64) Point {
		return Point{Series: Series{Name: name, Labels: map[string]string{"rank": rank}, Type: "gauge"}, Value: v}
	}
	var tl Timeline
	tl.Add(1, []Point{g("run", "0", 1), g("run", "1", 2)})
	tl.Add(2, []Point{g("run", "0", 3), g("run", "1", 5)})
	tl.Add(3, []Point{g("other", "0", 9)})
	tl.Add(4, []Point{g("run", "0", 4)})
	tl.Add(5, []Point{g("run", "0", 7), g("run", "1", 1)})
	for _, tc := range []struct {
		name       string
		names      []string
		sum        bool
		start, end int64
		want       string
		times      []int64
		vals       []float64
	}{
		{"summed", []string{"absent", "run"}, true, 0, 10, "run", []int64{1, 2, 4, 5}, []float64{3, 8, 4, 8}},
		{"averaged", []string{"run"}, false, 0, 10, "run", []int64{1, 2, 4, 5}, []float64{1.5, 4, 4, 4}},
		{"window", []string{"run"}, true, 2, 4, "run", []int64{2, 4}, []float64{8, 4}},
		{"none", []string{"absent"}, true, 0, 10, "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, times, vals := tl.GaugeSeries(tc.names, tc.sum, tc.start, tc.end)
			if name != tc.want || !slices.Equal(times, tc.times) || !slices.Equal(vals, tc.vals) {
				t.Errorf("got %q %v %v, want %q %v %v", name, times, vals, tc.want, tc.times, tc.vals)
			}
		})
	}
}
