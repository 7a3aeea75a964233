package measure

import (
	"fmt"
	"math"
	"strconv"
)

// A level key names one load level in records, summaries and verdicts. A
// closed-loop level is its concurrency C (1, 2, …); an open-loop level is
// RateLevelBase plus its arrival rate in thousandths of a request per second
// (RateLevel), so one int keys both kinds, a campaign's levels sort in load
// order whichever kind it sweeps, and every map and table keyed by level
// works for rates unchanged. A campaign sweeps one kind only. Records and
// summaries of an open-loop level also carry the rate itself (Rate, in
// requests per second) for people reading the JSON.
const (
	// RateLevelBase is where open-loop level keys start: far above any
	// concurrency a campaign accepts.
	RateLevelBase = 1_000_000_000
	// RateResolution is the smallest step between two rates, requests per
	// second: rates are kept in thousandths.
	RateResolution = 0.001
	// MaxRate is the highest arrival rate a level key holds, requests per
	// second.
	MaxRate = 1_000_000
)

// RateLevel is the level key of an open-loop level at rate requests per
// second, rounded to RateResolution.
func RateLevel(rate float64) int {
	return RateLevelBase + int(math.Round(rate/RateResolution))
}

// IsRate reports whether level is an open-loop level key.
func IsRate(level int) bool { return level >= RateLevelBase }

// LevelRate is the arrival rate of an open-loop level key, requests per
// second; 0 for a concurrency level.
func LevelRate(level int) float64 {
	if !IsRate(level) {
		return 0
	}
	return float64(level-RateLevelBase) * RateResolution
}

// LevelValue is the level's load as a number: the concurrency, or the
// arrival rate in requests per second (for plot axes and CSV).
func LevelValue(level int) float64 {
	if IsRate(level) {
		return LevelRate(level)
	}
	return float64(level)
}

// FormatRate writes a rate in requests per second without trailing zeros.
func FormatRate(rate float64) string { return strconv.FormatFloat(rate, 'f', -1, 64) }

// LevelName is how people read a level key: "C=4" or "4 req/s".
func LevelName(level int) string {
	if IsRate(level) {
		return FormatRate(LevelRate(level)) + " req/s"
	}
	return fmt.Sprintf("C=%d", level)
}

// LevelLabel is the short form for table columns and plot ticks: "4" for
// a concurrency, "4/s" for a rate.
func LevelLabel(level int) string {
	if IsRate(level) {
		return FormatRate(LevelRate(level)) + "/s"
	}
	return strconv.Itoa(level)
}
