package campaign

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// MetricChoice is one metric the verdict decides beside throughput (key
// verdict.metrics), with the ± margin, percent, inside which it is a tie:
// verdict.margins' entry, else the metric's own (measure.Metric.MarginPct);
// 0 for the campaign's equivalence_margin.
type MetricChoice struct {
	Name      string
	MarginPct float64
}

// verdict reads the campaign's verdict key:
//
//	verdict:
//	  metrics: [throughput, ttft_p99, itl_p99, user_tps]
//	  margins: {ttft_p99: 15%}
//
// Throughput is always decided (capacity, the per-GPU view and the Pareto
// frontier are of it); naming it is allowed and adds nothing.
func (d *doc) verdict(v *yaml.Node, c *Campaign) {
	var metricsN, marginsN *yaml.Node
	d.mapping(v, "verdict", map[string]field{
		"metrics": func(_, n *yaml.Node) { metricsN = n },
		"margins": func(_, n *yaml.Node) { marginsN = n },
	})
	if metricsN != nil {
		if metricsN.Kind != yaml.SequenceNode {
			d.errorf(metricsN, "verdict.metrics: want a list of metrics (%s), got %s", measure.MetricNames(), kindName(metricsN))
			return
		}
		for i, n := range metricsN.Content {
			n = deref(n)
			what := fmt.Sprintf("verdict.metrics[%d]", i)
			name, ok := d.word(n, what)
			if !ok {
				continue
			}
			m, known := measure.MetricByName(name)
			switch {
			case !known:
				d.errorf(n, "%s: unknown metric %q (known: %s)", what, name, measure.MetricNames())
			case slices.ContainsFunc(c.VerdictMetrics, func(x MetricChoice) bool { return x.Name == name }):
				d.errorf(n, "%s: %s is listed twice", what, name)
			case name != measure.MetricThroughput:
				c.VerdictMetrics = append(c.VerdictMetrics, MetricChoice{Name: name, MarginPct: m.MarginPct})
			}
		}
	}
	if marginsN == nil {
		return
	}
	d.pairs(marginsN, "verdict.margins", func(k, n *yaml.Node) {
		what := "verdict.margins." + k.Value
		x, ok := d.percent(n, what)
		if !ok {
			return
		}
		if x <= 0 {
			d.errorf(n, "%s: must be more than 0%% (no two measurements are ever exactly equal)", what)
			return
		}
		i := slices.IndexFunc(c.VerdictMetrics, func(m MetricChoice) bool { return m.Name == k.Value })
		switch {
		case i >= 0:
			c.VerdictMetrics[i].MarginPct = x
		case k.Value == measure.MetricThroughput:
			d.errorf(k, "%s: throughput's margin is the campaign's equivalence_margin", what)
		default:
			d.errorf(k, "%s: %q is not among verdict.metrics (%s)", what, k.Value, metricList(c.VerdictMetrics))
		}
	})
}

func metricList(ms []MetricChoice) string {
	if len(ms) == 0 {
		return "none but throughput"
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return fmt.Sprint(names)
}
