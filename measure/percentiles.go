package measure

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultPercentiles are the percentiles (0–100) every latency figure is
// shown at when the campaign names none (sweep.percentiles): the median,
// the tail a user notices, and two steps between.
var DefaultPercentiles = []float64{50, 90, 95, 99}

// PercentilesOr is ps, or DefaultPercentiles when ps is empty: a run or a
// campaign written without the key reads as the defaults.
func PercentilesOr(ps []float64) []float64 {
	if len(ps) == 0 {
		return DefaultPercentiles
	}
	return ps
}

// PercentileName writes a percentile the way campaigns and tables name it:
// "p99", "p99.9".
func PercentileName(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// ParsePercentile reads one percentile name, "p50" or "p99.9", strictly:
// more than 0 and under 100 (the minimum and the maximum are figures of
// their own), and written as PercentileName writes it ("p50", not "p050"
// or "p50.0"), so that each percentile has one name wherever it is a key.
func ParsePercentile(s string) (float64, error) {
	num, ok := strings.CutPrefix(s, "p")
	p, err := strconv.ParseFloat(num, 64)
	switch {
	case !ok || err != nil:
		return 0, fmt.Errorf("%q: want a percentile like p50 or p99.9", s)
	case !(p > 0 && p < 100):
		return 0, fmt.Errorf("%q: want more than p0 and less than p100", s)
	case PercentileName(p) != s:
		return 0, fmt.Errorf("%q: write it %s", s, PercentileName(p))
	}
	return p, nil
}

// ParsePercentiles reads a comma-separated list of percentile names
// ("p50,p90,p99"), each once, and returns them in ascending order.
func ParsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, name := range strings.Split(s, ",") {
		p, err := ParsePercentile(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("%s repeated", PercentileName(p))
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// FormatPercentiles is ParsePercentiles' input for ps: "p50,p90,p99".
func FormatPercentiles(ps []float64) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = PercentileName(p)
	}
	return strings.Join(names, ",")
}
