package campaign

import (
	"reflect"
	"testing"
)

// TestVerdictKey: verdict.metrics and verdict.margins are read with each
// metric's own margin unless given, throughput is always decided and adds
// nothing, and a wrong entry is refused with file:line:col naming the
// known metrics.
func TestVerdictKey(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    memFiles
		want     []MetricChoice
		wantErrs []string
	}{
		{name: "none", files: goodFiles},
		{name: "latencies with their margins", files: top("verdict:\n  metrics: [throughput, ttft_p99, itl_p99, user_tps]\n"),
			want: []MetricChoice{{"ttft_p99", 10}, {"itl_p99", 10}, {"user_tps", 0}}},
		{name: "a margin given", files: top("verdict:\n  metrics: [ttft_p50]\n  margins: {ttft_p50: 8%}\n"),
			want: []MetricChoice{{"ttft_p50", 8}}},
		{name: "an unknown metric", files: top("verdict:\n  metrics: [ttft_p95]\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:13: verdict.metrics[0]: unknown metric "ttft_p95" (known: throughput, user_tps, ttft_p50, ttft_p99, itl_p99)`}},
		{name: "listed twice", files: top("verdict:\n  metrics: [itl_p99, itl_p99]\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:22: verdict.metrics[1]: itl_p99 is listed twice`}},
		{name: "a margin for a metric not asked", files: top("verdict:\n  metrics: [itl_p99]\n  margins: {ttft_p99: 5%}\n"),
			wantErrs: []string{`c/configs/camp.yaml:11:13: verdict.margins.ttft_p99: "ttft_p99" is not among verdict.metrics ([itl_p99])`}},
		{name: "throughput's margin", files: top("verdict:\n  margins: {throughput: 5%}\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:13: verdict.margins.throughput: throughput's margin is the campaign's equivalence_margin`}},
		{name: "a zero margin", files: top("verdict:\n  metrics: [itl_p99]\n  margins: {itl_p99: 0}\n"),
			wantErrs: []string{`c/configs/camp.yaml:11:22: verdict.margins.itl_p99: must be more than 0% (no two measurements are ever exactly equal)`}},
		{name: "not a list", files: top("verdict:\n  metrics: ttft_p99\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:12: verdict.metrics: want a list of metrics (throughput, user_tps, ttft_p50, ttft_p99, itl_p99), got "ttft_p99"`}},
		{name: "an unknown key", files: top("verdict:\n  metric: [ttft_p99]\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:3: verdict: unknown key "metric" (known: margins, metrics)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Fatalf("errors:\n got: %q\nwant: %q", errs, tc.wantErrs)
			}
			if c != nil && !reflect.DeepEqual(c.VerdictMetrics, tc.want) {
				t.Errorf("metrics %+v, want %+v", c.VerdictMetrics, tc.want)
			}
		})
	}
}
