package verdict

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// Outcomes of a metric's comparison (MetricVerdict): the rule's faster and
// slower, in the words of a metric whose better may be lower.
const (
	OutcomeBetter = "better"
	OutcomeWorse  = "worse"
)

// MetricVerdict is one of the campaign's verdict.metrics decided per level
// as throughput is: one value per launch (measure.Metric.Of), the variant
// paired with the baseline by round, the launch-to-launch variance pooled
// over the levels, the sequential looks, Holm over the metric's own family
// (every pair of scenarios at every level) and a tie inside the metric's
// margin. Each metric is a family of its own, as each is a question of its
// own: a campaign that asks two metrics asks two families at alpha each.
//
// The rule compares higher-is-better figures; a latency is decided on its
// reciprocal and turned back here, so every figure below is the metric's
// own, in Unit: a cell's Throughput is the metric's geometric mean over
// the launches with its interval, its Speedup the variant's value over the
// baseline's (0.8: 20% lower), and its Outcome OutcomeBetter or
// OutcomeWorse where the rule said faster or slower.
type MetricVerdict struct {
	Metric string `json:"metric"`
	Label  string `json:"label"`
	Unit   string `json:"unit"`
	// Lower is true when lower is better (a latency).
	Lower bool `json:"lower_is_better,omitempty"`
	// MarginPct is the ± margin, percent, of a tie in this metric.
	MarginPct   float64 `json:"margin_pct"`
	Correction  string  `json:"correction"`
	Comparisons int     `json:"comparisons"`
	// Rows hold one comparison per level, as Verdict.Rows; a row's Winner
	// is the best scenario in this metric.
	Rows []Row `json:"rows"`
	// Sequential is what a sequential plan did to each variant for this
	// metric: a variant is launched while any of its comparisons in any
	// metric is open (Open).
	Sequential *SequentialVerdict `json:"sequential,omitempty"`
}

// decideMetric decides one of the run's verdict.metrics with the rule the
// throughput verdict used: its tie margin is the run's for it, else the
// metric's own (measure.Metric.MarginPct), else margin, the run's
// equivalence margin.
func decideMetric(in records.Input, o Options, m results.VerdictMetric, margin float64) (*MetricVerdict, error) {
	def, ok := measure.MetricByName(m.Name)
	if !ok || m.Name == measure.MetricThroughput {
		return nil, fmt.Errorf("verdict: the run's verdict.metrics names %q, which is no metric beside throughput (known: %s)", m.Name, measure.MetricNames())
	}
	o.Metric = m.Name
	o.EquivalenceMarginPct = firstPositive(m.MarginPct, def.MarginPct, margin)
	mv, err := DecideRun(in, o)
	if err != nil {
		return nil, fmt.Errorf("deciding %s: %w", def.Label, err)
	}
	out := &MetricVerdict{Metric: def.Name, Label: def.Label, Unit: def.Unit, Lower: def.Lower,
		MarginPct: mv.EquivalenceMarginPct, Correction: mv.Correction, Comparisons: mv.Comparisons,
		Rows: mv.Rows, Sequential: mv.Sequential}
	for i := range out.Rows {
		for j := range out.Rows[i].Cells {
			inMetric(&out.Rows[i].Cells[j], def)
		}
	}
	return out, nil
}

// inMetric turns a cell the rule decided on the metric's higher-is-better
// form back into the metric's own figures, in its display unit.
func inMetric(c *Cell, m measure.Metric) {
	flip := func(x float64) float64 {
		if m.Lower && x != 0 {
			return 1 / x
		}
		return x
	}
	e := &c.Throughput
	e.Center, e.Lo, e.Hi = m.Scale*flip(e.Center), m.Scale*flip(e.Lo), m.Scale*flip(e.Hi)
	if e.Lo > e.Hi {
		e.Lo, e.Hi = e.Hi, e.Lo
	}
	if !c.Compared {
		return
	}
	r := &c.Comparison
	r.Speedup, r.SpeedupLo, r.SpeedupHi = flip(r.Speedup), flip(r.SpeedupLo), flip(r.SpeedupHi)
	if r.SpeedupLo > r.SpeedupHi {
		r.SpeedupLo, r.SpeedupHi = r.SpeedupHi, r.SpeedupLo
	}
	r.OutcomeLo, r.OutcomeHi = flip(r.OutcomeLo), flip(r.OutcomeHi)
	if r.OutcomeLo > r.OutcomeHi {
		r.OutcomeLo, r.OutcomeHi = r.OutcomeHi, r.OutcomeLo
	}
	if r.Speedup > 0 {
		r.DeltaPct = 100 * (r.Speedup - 1)
	}
	switch r.Outcome {
	case OutcomeFaster:
		r.Outcome = OutcomeBetter
	case OutcomeSlower:
		r.Outcome = OutcomeWorse
	}
}

// Cell returns the metric's cell of scenario name at level c, or nil.
func (mv *MetricVerdict) Cell(c measure.Level, name string) *Cell { return cellIn(mv.Rows, c, name) }

// Metric returns the verdict's decision of the named metric, or nil when
// the run did not ask for it.
func (v *Verdict) Metric(name string) *MetricVerdict {
	for _, mv := range v.Metrics {
		if mv.Metric == name {
			return mv
		}
	}
	return nil
}
