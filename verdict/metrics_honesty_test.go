package verdict

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// Honesty of the latency and per-user metrics (verdict.metrics), each
// decided by the rule that decides throughput, on synthetic campaigns under
// the honesty tests' noise (1% launch noise, 1% drift, 5% per step): an
// A/A pair names a winner in no more than 5% of campaigns per metric, a
// variant truly 10% slower is found worse in 80% or more of its levels, and
// the 95% interval of an A/A ratio holds 1 at 90% or more of levels. A
// percentile read from one launch's few dozen requests is noisier than its
// throughput, and the rounds' variance measures that noise as it measures
// throughput's. BAKEOFF_METRIC_CAMPAIGNS=N runs N campaigns per figure.

// metricNames are the metrics the tests ask the verdict to decide.
var metricNames = []string{"user_tps", "ttft_p50", "ttft_p99", "itl_p99"}

func metricCampaigns(n int) int {
	if k, err := strconv.Atoi(os.Getenv("BAKEOFF_METRIC_CAMPAIGNS")); err == nil && k > 0 {
		return k
	}
	return n
}

// metricSweep is four levels of 64-token answers with every stream's gaps
// kept: enough requests a level for a p99 to be a tail, few enough tokens
// that the campaigns are quick to simulate.
func metricSweep() verdicttest.Sweep {
	s := verdicttest.DefaultSweep()
	s.Concurrency, s.MaxTokens, s.ITL = []int{1, 4, 16, 64}, 64, true
	return s
}

// metricVerdict is one campaign of DefaultRounds rounds of base and
// variant, with every metric asked for, judged under plan (nil: fixed).
func metricVerdict(t *testing.T, base, variant verdicttest.Engine, seed uint64, plan *SequentialPlan) *Verdict {
	t.Helper()
	s := metricSweep()
	rounds := DefaultRounds
	if plan != nil {
		rounds = plan.MaxRounds
	}
	in := verdicttest.CampaignInput([]string{"baseline", "variant"}, s, rounds,
		verdicttest.Campaign([]verdicttest.Engine{base, variant}, s, rounds, seed))
	for _, m := range metricNames {
		in.Manifest.VerdictMetrics = append(in.Manifest.VerdictMetrics, results.VerdictMetric{Name: m})
	}
	return mustVerdict(t, in, Options{Sequential: plan})
}

// metricTally counts one metric's outcomes over campaigns.
type metricTally struct {
	campaigns, named           int // campaigns, and those naming a winner
	cells, better, worse, tied int
	covered, intervals         int // A/A intervals holding 1
}

func (m *metricTally) add(mv *MetricVerdict) {
	m.campaigns++
	named := false
	for _, row := range mv.Rows {
		c := row.Cell("variant")
		if c == nil || !c.Compared {
			continue
		}
		m.cells++
		switch c.Outcome {
		case OutcomeBetter:
			m.better++
			named = true
		case OutcomeWorse:
			m.worse++
			named = true
		case OutcomeTie:
			m.tied++
		}
		if c.SpeedupLo > 0 {
			m.intervals++
			if c.SpeedupLo <= 1 && 1 <= c.SpeedupHi {
				m.covered++
			}
		}
	}
	if named {
		m.named++
	}
}

func (m metricTally) String() string {
	return fmt.Sprintf("%d campaigns, %d naming a winner; %d cells: %d better, %d worse, %d tied; 1 in %d of %d intervals",
		m.campaigns, m.named, m.cells, m.better, m.worse, m.tied, m.covered, m.intervals)
}

// tallyMetrics runs n campaigns of base against variant and tallies each
// metric.
func tallyMetrics(t *testing.T, base, variant verdicttest.Engine, n int, seed0 uint64, plan *SequentialPlan) map[string]*metricTally {
	t.Helper()
	out := map[string]*metricTally{}
	for _, m := range metricNames {
		out[m] = &metricTally{}
	}
	for k := range uint64(n) {
		v := metricVerdict(t, base, variant, seed0+k, plan)
		if len(v.Metrics) != len(metricNames) {
			t.Fatalf("%d metrics decided, want %d", len(v.Metrics), len(metricNames))
		}
		for _, mv := range v.Metrics {
			out[mv.Metric].add(mv)
		}
	}
	return out
}

// TestMetricsAA: the baseline against itself, 40 campaigns at the default
// rounds and 40 under the sequential plan: per metric, a winner named in
// at most 5% of campaigns (2 of 40), and the A/A interval holding 1 at 90%
// or more of levels.
func TestMetricsAA(t *testing.T) {
	syntheticCampaigns(t)
	n := metricCampaigns(40)
	for _, tc := range []struct {
		name string
		plan *SequentialPlan
	}{{"fixed", nil}, {"sequential", &SequentialPlan{MinRounds: 3, MaxRounds: 8}}} {
		for m, tl := range tallyMetrics(t, realBaseline, realBaseline, n, 500, tc.plan) {
			t.Logf("A/A %s, %s: %s", tc.name, m, tl)
			if tl.named*20 > tl.campaigns {
				t.Errorf("%s, %s: a winner named in %d of %d campaigns, want ≤ 5%%", tc.name, m, tl.named, tl.campaigns)
			}
			if tc.plan == nil && tl.covered*10 < tl.intervals*9 {
				t.Errorf("%s, %s: the 95%% interval held 1 in %d of %d, want ≥ 90%%", tc.name, m, tl.covered, tl.intervals)
			}
		}
	}
}

// TestMetricsPower: a variant whose every step is 10% longer (its TTFT 10%
// longer, its per-user speed 9% lower) is found worse at 80% or more of its
// levels in TTFT p50 and p99 and per-user speed, and never better. ITL p99's
// margin is 10%, so a change of 10% is on its edge: it is asked to find a
// 20% change instead.
func TestMetricsPower(t *testing.T) {
	syntheticCampaigns(t)
	n := metricCampaigns(20)
	for _, tc := range []struct {
		slowdown float64
		metrics  []string
	}{{1.10, []string{"user_tps", "ttft_p50", "ttft_p99"}}, {1.20, []string{"itl_p99"}}} {
		slow := realBaseline
		slow.Slowdown = tc.slowdown
		for m, tl := range tallyMetrics(t, realBaseline, slow, n, 900, nil) {
			if !slices.Contains(tc.metrics, m) {
				continue
			}
			t.Logf("power, %.0f%% slower, %s: %s", 100*(tc.slowdown-1), m, tl)
			if tl.worse*10 < tl.cells*8 {
				t.Errorf("%s, %.0f%% slower: found worse in %d of %d levels, want ≥ 80%%", m, 100*(tc.slowdown-1), tl.worse, tl.cells)
			}
			if tl.better > 0 {
				t.Errorf("%s: the slower variant was called better at %d levels", m, tl.better)
			}
		}
	}
}

// TestMetricFigures: a metric's cells are in its own units and direction:
// the slower variant's TTFT is higher than the baseline's, its ratio above
// 1 with the interval around it, and the row's winner is the baseline, the
// scenario with the lower TTFT.
func TestMetricFigures(t *testing.T) {
	slow := realBaseline
	slow.Slowdown = 1.3
	v := metricVerdict(t, realBaseline, slow, 77, nil)
	mv := v.Metric("ttft_p50")
	if mv == nil || !mv.Lower || mv.Unit != "ms" || mv.MarginPct != 5 {
		t.Fatalf("ttft_p50: %+v", mv)
	}
	for _, row := range mv.Rows {
		b, c := row.Cell("baseline"), row.Cell("variant")
		if !(c.Throughput.Center > b.Throughput.Center) || !(c.Throughput.Lo <= c.Throughput.Center && c.Throughput.Center <= c.Throughput.Hi) {
			t.Errorf("%s: baseline %+v, variant %+v: want the variant's TTFT higher, inside its interval", measure.LevelName(row.Level), b.Throughput, c.Throughput)
		}
		if !(c.SpeedupLo < c.Speedup && c.Speedup < c.SpeedupHi) || math.Abs(c.DeltaPct-100*(c.Speedup-1)) > 1e-9 || c.Speedup < 1.1 {
			t.Errorf("%s: ratio %.3f [%.3f, %.3f], change %+.1f%%: want about 1.3 inside its interval", measure.LevelName(row.Level), c.Speedup, c.SpeedupLo, c.SpeedupHi, c.DeltaPct)
		}
		if c.Outcome != OutcomeWorse || row.Winner != "baseline" {
			t.Errorf("%s: outcome %s, winner %q; want worse, baseline", measure.LevelName(row.Level), c.Outcome, row.Winner)
		}
	}
	if tp := v.Cell(measure.ConcurrencyLevel(1), "variant"); tp == nil || tp.Outcome != OutcomeSlower {
		t.Errorf("throughput at C=1: %+v, want slower: the metrics leave the verdict's own table alone", tp)
	}
}

// TestUnknownMetric: a run whose manifest names a metric bakeoff does not
// know is an error that names it and the known ones.
func TestUnknownMetric(t *testing.T) {
	in := records.Input{Manifest: results.Manifest{Baseline: "a", Scenarios: []string{"a"},
		VerdictMetrics: []results.VerdictMetric{{Name: "ttft_p95"}}}}
	_, err := DecideRun(in, Options{})
	if err == nil || !strings.Contains(err.Error(), `"ttft_p95"`) || !strings.Contains(err.Error(), "itl_p99") {
		t.Fatalf("err = %v, want one naming ttft_p95 and the known metrics", err)
	}
}

// TestOpenWaitsOnMetrics: a variant whose throughput comparisons are all
// closed is still launched while a comparison in one of the verdict's
// metrics is open, and stops once every metric has closed.
func TestOpenWaitsOnMetrics(t *testing.T) {
	stops := func(stopped bool) *SequentialVerdict {
		return &SequentialVerdict{MinRounds: 3, MaxRounds: 8, Variants: []VariantStop{{Variant: "eagle3", Stopped: stopped}}}
	}
	v := &Verdict{Sequential: stops(true), Metrics: []*MetricVerdict{
		{Metric: "ttft_p99", Sequential: stops(true)},
		{Metric: "itl_p99", Sequential: stops(false)},
	}}
	if got := Open(v); !slices.Equal(got, []string{"eagle3"}) {
		t.Errorf("open %v with ITL p99 undecided, want [eagle3]", got)
	}
	v.Metrics[1].Sequential = stops(true)
	if got := Open(v); len(got) != 0 {
		t.Errorf("open %v with every metric closed, want none", got)
	}
}

// TestPlanningViewBindsOnMetrics: the planner reads, per cell, the open
// comparison that needs the most rounds at throughput's margin: a TTFT p99
// still open with a 10% round spread at its ±10% margin weighs as a 2%
// spread at throughput's ±2%, more than throughput's own closed 1%; one
// with a 5% spread weighs less than an open throughput's 1.5%.
func TestPlanningViewBindsOnMetrics(t *testing.T) {
	cell := func(open bool, sd float64) Cell {
		return Cell{Scenario: "eagle3", Compared: true, Comparison: Comparison{Open: open, RoundSDPct: sd, Rounds: 3, DF: 4}}
	}
	rows := func(c Cell) []Row {
		return []Row{{Level: measure.ConcurrencyLevel(1), Cells: []Cell{{Scenario: "baseline"}, c}}}
	}
	for _, tc := range []struct {
		name     string
		tp, ttft Cell
		open     bool
		wantSD   float64
	}{
		{"throughput closed, TTFT open", cell(false, 1), cell(true, 10), true, 1.924},
		{"both open, throughput binds", cell(true, 1.5), cell(true, 5), true, 1.5},
		{"TTFT closed", cell(false, 1), cell(false, 10), false, 1},
	} {
		v := &Verdict{EquivalenceMarginPct: 2, Rows: rows(tc.tp),
			Metrics: []*MetricVerdict{{Metric: "ttft_p99", MarginPct: 10, Rows: rows(tc.ttft)}}}
		got := PlanningView(v).Rows[0].Cells[1]
		if got.Open != tc.open || math.Abs(got.RoundSDPct-tc.wantSD) > 0.001 {
			t.Errorf("%s: open %v, round sd %.3f%%; want %v, %.3f%%", tc.name, got.Open, got.RoundSDPct, tc.open, tc.wantSD)
		}
		if v.Rows[0].Cells[1].RoundSDPct != tc.tp.RoundSDPct {
			t.Errorf("%s: the view changed the verdict's own cell", tc.name)
		}
	}
}

// TestLaunchStopsTakeTheLastMetric: the launches a campaign made run to
// the round the last metric closed, and the cost counts them.
func TestLaunchStopsTakeTheLastMetric(t *testing.T) {
	stop := func(after int) *SequentialVerdict {
		return &SequentialVerdict{MinRounds: 3, MaxRounds: 8, Variants: []VariantStop{{Variant: "pd", Stopped: true, StoppedAfter: after, Comparisons: 3, Decided: 3}}}
	}
	v := &Verdict{Baseline: "base", Sequential: stop(4), Metrics: []*MetricVerdict{{Metric: "itl_p99", Sequential: stop(6)}},
		Scenarios: []Scenario{{Name: "base"}, {Name: "pd"}}}
	if got := v.LaunchStops(); len(got) != 1 || !got[0].Stopped || got[0].StoppedAfter != 6 {
		t.Errorf("launch stops %+v, want pd stopped after round 6", got)
	}
	for _, name := range []string{"pd", "base"} {
		if got := v.RoundsAskedOf(name); got != 6 {
			t.Errorf("rounds asked of %s: %d, want 6", name, got)
		}
	}
}
