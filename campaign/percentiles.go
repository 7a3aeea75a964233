package campaign

import (
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// percentiles decodes sweep.percentiles: a list of percentile names (p50,
// p99.9), each once, returned ascending so that the tables' order does not
// depend on how the file lists them.
func (d *doc) percentiles(v *yaml.Node) []float64 {
	out := distinctList(d, v, "sweep.percentiles", "percentiles like [p50, p90, p99]", "percentile",
		func(n *yaml.Node, what string) (float64, float64, string, bool) {
			if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
				d.errorf(n, "%s: want a percentile like p50 or p99.9, got %s", what, kindName(n))
				return 0, 0, "", false
			}
			p, err := measure.ParsePercentile(n.Value)
			if err != nil {
				d.errorf(n, "%s: %v", what, err)
				return 0, 0, "", false
			}
			return p, p, n.Value, true
		})
	slices.Sort(out)
	return out
}
