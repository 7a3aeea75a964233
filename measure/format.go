package measure

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FormatLevel renders a level as one line in the seeds' format, extended
// with TTFT and TPOT (milliseconds), failures by class, and flags:
//
//	C=  1 | 30 requests | throughput:    86.8 tok/s | per-req:   87.0 tok/s | latency avg/p50/p99:    2.3/   2.3/   2.6s | TTFT p50/p99:    45/    61ms | TPOT p50/p99:  11.3/  11.9ms | ok: 30/30
func FormatLevel(s LevelSummary) string {
	var b strings.Builder
	if IsRate(s.Level) {
		fmt.Fprintf(&b, "%9s", LevelName(s.Level))
	} else {
		fmt.Fprintf(&b, "C=%3d", s.Level.Concurrency)
	}
	if s.Repeat > 0 {
		fmt.Fprintf(&b, " #%d", s.Repeat+1)
	}
	est := ""
	if s.TokensEstimated {
		est = "~" // tokens estimated: the server sent no usage
	}
	fmt.Fprintf(&b, " | %d requests | throughput: %7.1f%s tok/s | per-req: %6.1f%s tok/s", s.Requests,
		s.Throughput, est, s.PerRequestTokS, est)
	fmt.Fprintf(&b, " | latency avg/p50/p99: %6.1f/%6.1f/%6.1fs", s.LatencyMean, s.LatencyP50, s.LatencyP99)
	fmt.Fprintf(&b, " | TTFT p50/p99: %5.0f/%5.0fms", s.TTFTP50*1e3, s.TTFTP99*1e3)
	fmt.Fprintf(&b, " | TPOT p50/p99: %5.1f/%5.1fms", s.TPOTP50*1e3, s.TPOTP99*1e3)
	fmt.Fprintf(&b, " | ok: %d/%d", s.OK, s.Requests)
	if len(s.FailedByClass) > 0 {
		classes := slices.Sorted(maps.Keys(s.FailedByClass))
		for i, c := range classes {
			classes[i] = fmt.Sprintf("%s %d", c, s.FailedByClass[c])
		}
		fmt.Fprintf(&b, " (failed: %s)", strings.Join(classes, ", "))
	}
	if s.ConnRetries > 0 {
		// Not failures: the server closed kept-alive connections, and these
		// requests were sent again on new ones (docs/LOADGEN.md).
		fmt.Fprintf(&b, " | conn retries: %d", s.ConnRetries)
	}
	if s.AcceptLength != nil {
		fmt.Fprintf(&b, " | accept: %.2f", *s.AcceptLength)
	}
	if IsRate(s.Level) {
		fmt.Fprintf(&b, " | sent %.3g/s, late p99 %.0fms", s.ArrivalRate, s.LateP99*1e3)
	}
	if s.Saturated {
		b.WriteString(" | SATURATED")
	}
	if s.ClientLimited {
		b.WriteString(" | CLIENT-LIMITED?")
	}
	return b.String()
}
