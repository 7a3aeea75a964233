package campaign

import (
	"math"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/slo"
)

// slo decodes the campaign key slo: a mapping of latency bounds, each
// keyed METRIC_pN (ttft_p99, itl_p95, tpot_p99.9: slo.ParseKey) with a
// duration, and min_success (a fraction, or a percentage like 99%). nil
// when it has no bound or is wrong (the error is recorded).
func (d *doc) slo(v *yaml.Node) *slo.SLO {
	var s slo.SLO
	if v.Kind != yaml.MappingNode {
		d.errorf(v, "slo: want a mapping of bounds (e.g. {ttft_p99: 2s, tpot_p99: 60ms}), got %s", kindName(v))
		return nil
	}
	latency := func(key string) field {
		return func(_, v *yaml.Node) {
			x, ok := d.positiveDuration(v, "slo."+key)
			if !ok {
				return
			}
			if x > time.Hour {
				d.errorf(v, "slo.%s: %s is longer than an hour; no request runs that long", key, x)
				return
			}
			if s.Bounds == nil {
				s.Bounds = map[string]float64{}
			}
			s.Bounds[key] = x.Seconds()
		}
	}
	fields := map[string]field{
		slo.MinSuccess: func(_, v *yaml.Node) {
			if x, ok := d.fraction(v, "slo."+slo.MinSuccess); ok {
				s.MinSuccess = x
			}
		},
	}
	// The bounds' keys are a grammar, not a list: each key of the mapping
	// that reads as one is a field, and one that does not is refused here,
	// with the grammar, rather than as an unknown key among a few.
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := deref(v.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || k.Value == slo.MinSuccess || fields[k.Value] != nil {
			continue
		}
		if _, _, err := slo.ParseKey(k.Value); err != nil {
			d.errorf(k, "slo: %v", err)
			fields[k.Value] = func(_, _ *yaml.Node) {}
			continue
		}
		fields[k.Value] = latency(k.Value)
	}
	d.mapping(v, "slo", fields)
	if !s.Set() {
		if v.Kind == yaml.MappingNode && len(v.Content) == 0 {
			d.errorf(v, "slo: empty; give at least one bound (%s) or min_success", slo.KeyGrammar)
		}
		return nil
	}
	return &s
}

// fraction decodes a share in (0, 1]: 0.99, or a percentage written with
// its sign, "99%".
func (d *doc) fraction(n *yaml.Node, what string) (float64, bool) {
	if n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		x, ok := d.percent(n, what)
		if !ok {
			return 0, false
		}
		if x <= 0 {
			d.errorf(n, "%s: must be more than 0%%, got %s", what, n.Value)
			return 0, false
		}
		return math.Round(x*1e10) / 1e12, true // 99.9% is 0.999, not 0.9990000000000001
	}
	x, ok := d.number(n, what)
	if !ok {
		return 0, false
	}
	if x <= 0 || x > 1 {
		d.errorf(n, "%s: want a fraction in (0, 1] like 0.99 (or 99%%), got %s", what, n.Value)
		return 0, false
	}
	return x, true
}
