package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Benchstat writes the throughput in the Go benchmark text format, so that
// benchstat itself can read bakeoff's results: one line per launch (the
// unit the verdict compares) when the run has rounds, else one line per
// within-launch sample:
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
			for _, x := range BenchValues(v, l) {
				fmt.Fprintf(ew, "BenchmarkServe/%s/scenario=%s 1 %g tok/s\n", benchLevel(c), benchValue(s.Name), x)
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

// BenchValues are the values Benchstat writes for one level: the launches'
// throughputs when the run has more than one round, else the within-launch
// samples.
func BenchValues(v *verdict.Verdict, l *verdict.Level) []float64 {
	if v.Rounds <= 1 {
		return l.Samples
	}
	out := make([]float64, 0, len(l.Launches))
	for _, ll := range l.Launches {
		out = append(out, ll.Throughput)
	}
	return out
}

// benchLevel is the level as a benchmark name part: "C=4", or "rate=0.5"
// (requests per second) for an open-loop level.
func benchLevel(level measure.Level) string {
	if measure.IsSpeed(level) {
		return "speed=" + measure.FormatRate(level.Speed)
	}
	if measure.IsRate(level) {
		return "rate=" + measure.FormatRate(level.Rate)
	}
	return fmt.Sprintf("C=%d", level.Concurrency)
}
