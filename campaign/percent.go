package campaign

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParsePercent reads a percentage as configs and command-line flags both
// write it: `2%`, `2.5%`, `0.5%`, or a bare number that means percent (`2`
// is 2%). A bare number between 0 and 1 is refused: `0.02` reads as 2% to
// someone who thinks in fractions and as 0.02% to someone who thinks in
// percent, and a margin fifty times too tight (or a regression gate fifty
// times too loose) is a silent error; the % sign settles it. The result is
// in percent and lies in [0, 100).
func ParsePercent(text string) (float64, error) {
	s := strings.TrimSpace(text)
	num, sign := strings.CutSuffix(s, "%")
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a percentage (want e.g. 2%% or 2)", text)
	}
	if !sign && x > 0 && x < 1 {
		return 0, fmt.Errorf("%s is ambiguous: write %s%% for a fraction of %s, or %s%% for %s percent",
			s, strconv.FormatFloat(x*100, 'g', -1, 64), s, s, s)
	}
	if x < 0 || x >= 100 {
		return 0, fmt.Errorf("%s%% is outside 0%%-100%%", strconv.FormatFloat(x, 'g', -1, 64))
	}
	return x, nil
}
