package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// metricsShaped is a campaign that asks the verdict for TTFT p99, ITL p99
// and per-user speed beside throughput: the baseline against EAGLE-3
// topk=4, whose speculative steps give each user more tokens a second at
// one stream and fewer under load, and whose TTFT is longer at every level.
func metricsShaped(t *testing.T) *verdict.Verdict {
	t.Helper()
	s := demoSweep()
	s.Concurrency, s.ITL, s.Speed = []int{1, 5, 30}, true, 1
	scs := []fixtureScenario{
		{"baseline", verdicttest.RealisticNoise(verdicttest.Baseline)},
		{"eagle3-topk4", verdicttest.RealisticNoise(verdicttest.Eagle3TopK4)},
	}
	v := campaignVerdict(t, s, 4, 11, scs, nil, func(m *results.Manifest) {
		m.VerdictMetrics = []results.VerdictMetric{{Name: "ttft_p99"}, {Name: "itl_p99"}, {Name: "user_tps"}}
	})
	if len(v.Metrics) != 3 {
		t.Fatalf("%d metrics decided, want 3", len(v.Metrics))
	}
	return v
}

// TestMetricsOnTheLastScreen: each metric is a table of its own in its
// unit, headed by which way is better and its tie margin, with a sentence
// per variant; a golden at 80 and 120 columns, and no line wider than the
// terminal.
func TestMetricsOnTheLastScreen(t *testing.T) {
	v := metricsShaped(t)
	for _, width := range []int{80, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			var buf bytes.Buffer
			if err := End(&buf, v, width, endWhere); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for i, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > width {
					t.Errorf("line %d is %d columns wide, more than %d:\n%s", i+1, n, width, line)
				}
			}
			flat := strings.Join(strings.Fields(out), " ")
			for _, want := range []string{"TTFT p99 in ms, lower is better (a tie within ±10%", "ITL p99 in ms", "per-user speed in tok/s, higher is better (a tie within ±2%",
				"TTFT p99: eagle3-topk4 against baseline is worse at C=1", "per-user speed: eagle3-topk4 against baseline is better at C=1"} {
				if !strings.Contains(flat, want) {
					t.Errorf("the last screen lacks %q:\n%s", want, out)
				}
			}
			golden.Check(t, filepath.Join("testdata", fmt.Sprintf("end-metrics-%d.txt", width)), buf.Bytes())
		})
	}
}

// TestMetricsInMarkdown: the markdown report carries each metric's table
// and sentences after the throughput's.
func TestMetricsInMarkdown(t *testing.T) {
	v := metricsShaped(t)
	var buf bytes.Buffer
	if err := Markdown(&buf, v); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	i, j := strings.Index(out, "| baseline tok/s"), strings.Index(out, "| baseline ms")
	if i < 0 || j < i || !strings.Contains(out, "- TTFT p99: eagle3-topk4 against baseline is") {
		t.Errorf("markdown: want the throughput table, then TTFT's in ms with its sentence:\n%s", out)
	}
}

// TestMetricsOnThePage: the HTML page has a section per metric, linked
// from its navigation, with the metric's table under its own field, so
// that the page's throughput figures stay throughput's alone.
func TestMetricsOnThePage(t *testing.T) {
	v := metricsShaped(t)
	p, err := htmlPage(v)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := htmlTemplate().Execute(&buf, p); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`<a href="#metric-ttft_p99">TTFT p99</a>`, `<section id="metric-itl_p99">`, `id="metric-user_tps-table"`,
		`data-field="ttft_p99" data-scenario="eagle3-topk4"`, "TTFT p99: eagle3-topk4 against baseline is worse at C=1"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n, want := strings.Count(page, `data-field="throughput" `), 2*len(v.Rows); n != want {
		t.Errorf("%d throughput figures on the page, want %d: the verdict table's alone", n, want)
	}
}

// TestStopLineCountsMetricRounds: a variant whose throughput closed after
// round 4 but whose ITL p99 kept it launching to round 6 reads 6 rounds,
// with why.
func TestStopLineCountsMetricRounds(t *testing.T) {
	stop := func(after int) *verdict.SequentialVerdict {
		return &verdict.SequentialVerdict{MinRounds: 3, MaxRounds: 6, Variants: []verdict.VariantStop{{Variant: "pd", Stopped: true,
			StoppedAfter: after, Rounds: after, Reason: fmt.Sprintf("decided after %d rounds", after)}}}
	}
	v := &verdict.Verdict{Baseline: "base", Sequential: stop(4), Metrics: []*verdict.MetricVerdict{{Metric: "itl_p99", Sequential: stop(6)}}}
	lines := sequentialVariantLines(v)
	if want := "pd: 6 rounds; decided after 4 rounds; launched to round 6 for its metrics (below)"; len(lines) != 1 || lines[0] != want {
		t.Errorf("stop lines %q, want [%q]", lines, want)
	}
}
