package timeline

import (
	"fmt"
	"io"
	"math"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Parse reads one scrape in the Prometheus text exposition format into
// points, one per series, with Prometheus' own parser. A parse error returns
// the points read before it.
func Parse(r io.Reader) ([]Point, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	var out []Point
	for name, f := range fams {
		typ := strings.ToLower(f.GetType().String())
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(suffix string, extra map[string]string, v float64) {
				ls := labels
				if len(extra) > 0 {
					ls = make(map[string]string, len(labels)+len(extra))
					for k, v := range labels {
						ls[k] = v
					}
					for k, v := range extra {
						ls[k] = v
					}
				}
				if len(ls) == 0 {
					ls = nil
				}
				out = append(out, Point{Series{Name: name + suffix, Labels: ls, Type: typ}, v})
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add("", nil, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add("", nil, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add("", nil, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				hasInf := false
				for _, b := range h.GetBucket() {
					hasInf = hasInf || math.IsInf(b.GetUpperBound(), +1)
					add("_bucket", map[string]string{model.BucketLabel: formatLe(b.GetUpperBound())}, float64(b.GetCumulativeCount()))
				}
				if !hasInf {
					// The parser folds the +Inf bucket into the count.
					add("_bucket", map[string]string{model.BucketLabel: "+Inf"}, float64(h.GetSampleCount()))
				}
				add("_sum", nil, h.GetSampleSum())
				add("_count", nil, float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add("", map[string]string{model.QuantileLabel: formatLe(q.GetQuantile())}, q.GetValue())
				}
				add("_sum", nil, s.GetSampleSum())
				add("_count", nil, float64(s.GetSampleCount()))
			}
		}
	}
	if err != nil {
		return out, fmt.Errorf("parsing metrics: %w", err)
	}
	return out, nil
}
