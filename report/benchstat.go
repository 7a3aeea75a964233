package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Benchstat writes the throughput samples in the Go benchmark text format,
// one line per sample, so that benchstat itself can read bakeoff's results:
//
//	benchstat -col /scenario benchstat.txt
//
// The configuration lines name the campaign, run and fingerprint; the
// benchmark name carries the level and the scenario as sub-benchmark keys.
func Benchstat(w io.Writer, v *verdict.Verdict) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "campaign: %s\nrun: %s\nfingerprint: %s\nbaseline: %s\n",
		benchValue(v.Campaign), benchValue(v.Run), benchValue(v.Fingerprint), benchValue(v.Baseline))
	for _, c := range v.Levels {
		for _, s := range v.Scenarios {
			l := s.Level(c)
			if l == nil {
				continue
			}
			for _, x := range l.Samples {
				fmt.Fprintf(ew, "BenchmarkServe/C=%d/scenario=%s 1 %g tok/s\n", c, benchValue(s.Name), x)
			}
		}
	}
	return ew.err
}

// benchValue keeps a value on one field: the format splits on spaces and
// sub-benchmark names on slashes.
func benchValue(s string) string {
	if s == "" {
		return "-"
	}
	return strings.NewReplacer(" ", "_", "/", "_", "\n", "_").Replace(s)
}
