package verdict

// How a verdict's figures are written, the same in the cells, the notes and
// the explanations.

import (
	"fmt"
	"strings"
)

// Pct formats a percentage delta with its sign and a true minus sign, e.g.
// "+3.8%" or "−54.0%".
func Pct(d float64) string {
	s := fmt.Sprintf("%+.1f%%", d)
	return strings.Replace(s, "-", "−", 1)
}

// FormatP formats a p-value with three decimals, "<0.001" below that.
func FormatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// PClause is "p=0.002", or "p<0.001" below that.
func PClause(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}

// FirstLine is s up to its first line break, with " …" when more followed:
// a failure reason can carry a log excerpt, which belongs in the details,
// not in a one-line note.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// Plural is "1 round" or "3 rounds".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
