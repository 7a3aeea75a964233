package timeline

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// scrapes makes n scrapes of a server-like exposition: a gauge that moves,
// a counter that climbs (and resets once), a bucket that rarely changes, a
// series that goes away, one that appears late and a NaN gauge.
func scrapes(n int) ([]int64, [][]Point) {
	rng := rand.New(rand.NewPCG(1, 2))
	lbl := map[string]string{"model_name": "m"}
	var times []int64
	var out [][]Point
	var ctr float64
	for k := range n {
		times = append(times, sec(float64(k)))
		ctr += float64(rng.IntN(50))
		if k == n/2 {
			ctr = 3 // a restart
		}
		pts := []Point{
			{Series{"sglang:num_running_reqs", lbl, "gauge"}, float64(rng.IntN(3))},
			{Series{"sglang:generation_tokens_total", lbl, "counter"}, ctr},
			{Series{"sglang:ttft_seconds_bucket", map[string]string{"le": "0.1", "model_name": "m"}, "histogram"}, float64(k / 7)},
			{Series{"sglang:odd", nil, "gauge"}, math.NaN()},
		}
		if k < n/3 {
			pts = append(pts, Point{Series{"early", nil, "untyped"}, 1})
		}
		if k > n/4 {
			pts = append(pts, Point{Series{"late", nil, "gauge"}, math.Inf(1)})
		}
		out = append(out, pts)
	}
	return times, out
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// TestFileRoundTrip writes scrapes deduplicated and reads back every scrape
// exactly, and checks the file holds fewer values than the scrapes did.
func TestFileRoundTrip(t *testing.T) {
	times, scr := scrapes(60)
	var mem Timeline
	var buf bytes.Buffer
	w := NewWriter(&buf)
	total := 0
	for k, pts := range scr {
		mem.Add(times[k], pts)
		if err := w.Write(times[k], pts); err != nil {
			t.Fatal(err)
		}
		total += len(pts)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Times, mem.Times) || !reflect.DeepEqual(got.Series, mem.Series) {
		t.Fatalf("times or series differ:\n%v\n%v", got.Series, mem.Series)
	}
	for i := range mem.Values {
		if !sameFloats(got.Values[i], mem.Values[i]) {
			t.Errorf("%s: read %v, wrote %v", mem.Series[i].Name, got.Values[i], mem.Values[i])
		}
	}
	written := strings.Count(buf.String(), ":") // every value and field is one key
	if written >= total {
		t.Errorf("%d keys written for %d values scraped: not deduplicated", written, total)
	}
	last := buf.String()[strings.LastIndex(strings.TrimRight(buf.String(), "\n"), "\n")+1:]
	if !strings.Contains(last, `"end":true`) {
		t.Errorf("last line %q is not the closing full scrape", last)
	}

	// A sweep killed mid-line leaves a torn last line: every whole scrape reads.
	cut := buf.Bytes()[:bytes.LastIndex(buf.Bytes()[:buf.Len()-1], []byte("\n"))+10]
	torn, err := Read(bytes.NewReader(cut))
	if err != nil || len(torn.Times) != len(mem.Times) {
		t.Errorf("torn file: %d scrapes, %v; want %d and no error", len(torn.Times), err, len(mem.Times))
	}
}

// TestParse reads an exposition with Prometheus' parser into series.
func TestParse(t *testing.T) {
	const text = `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m"} 5
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="m"} 1200
# TYPE x_seconds histogram
x_seconds_bucket{le="0.1"} 2
x_seconds_bucket{le="+Inf"} 3
x_seconds_sum 0.4
x_seconds_count 3
`
	pts, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var tl Timeline
	tl.Add(sec(1), pts)
	want := map[string]float64{
		"sglang:num_running_reqs\xffmodel_name=m": 5, "sglang:generation_tokens_total\xffmodel_name=m": 1200,
		"x_seconds_bucket\xffle=0.1": 2, "x_seconds_bucket\xffle=+Inf": 3, "x_seconds_sum": 0.4, "x_seconds_count": 3,
	}
	if len(tl.Series) != len(want) {
		t.Errorf("%d series, want %d: %v", len(tl.Series), len(want), tl.Series)
	}
	for i, s := range tl.Series {
		if v, ok := want[s.key()]; !ok || tl.Values[i][0] != v {
			t.Errorf("%s = %v, want %v (%v)", s.key(), tl.Values[i][0], v, ok)
		}
	}
}
