package measure

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Level names one load level in records, summaries and verdicts: a closed
// loop holding Concurrency requests in flight, an open loop sending Rate
// requests per second, or a trace replayed at Speed times its recorded
// pace (the other fields 0). A campaign sweeps one kind only. Levels are
// comparable, so they key maps; RateLevel and SpeedLevel round to
// RateResolution, so that one level is one key whichever way it was
// written.
type Level struct {
	Concurrency int
	Rate        float64
	Speed       float64
}

const (
	// RateResolution is the smallest step between two rates, requests per
	// second: rates are kept in thousandths.
	RateResolution = 0.001
	// MaxRate is the highest arrival rate a level holds, requests per
	// second.
	MaxRate = 1_000_000

	// rateKeyBase is where open-loop levels start in the numbers written to
	// JSON: far above any concurrency a campaign accepts, with the rate in
	// thousandths added to it, so every level is a number and levels sort
	// in load order as numbers.
	rateKeyBase = 1_000_000_000
	// perRequest is how many thousandths make a request per second.
	perRequest = 1000
)

// ConcurrencyLevel is the closed-loop level of c requests in flight.
func ConcurrencyLevel(c int) Level { return Level{Concurrency: c} }

// RateLevel is the open-loop level at rate requests per second, rounded to
// RateResolution.
func RateLevel(rate float64) Level {
	return Level{Rate: float64(rateThousandths(rate)) / perRequest}
}

// rateThousandths is rate in thousandths of a request per second, rounded.
func rateThousandths(rate float64) int64 { return int64(math.Round(rate / RateResolution)) }

// IsRate reports whether l is an open-loop level: a rate, or a trace's
// speed. Both send each request at its due time whatever is in flight, so
// both are judged alike (the open-loop window, lateness, saturation).
func IsRate(l Level) bool { return l.Rate > 0 || l.Speed > 0 }

// LevelValue is the level's load as a number: the concurrency, or the
// arrival rate in requests per second (for plot axes and CSV).
func LevelValue(l Level) float64 {
	if IsSpeed(l) {
		return l.Speed
	}
	if IsRate(l) {
		return l.Rate
	}
	return float64(l.Concurrency)
}

// Compare orders levels by load: closed-loop levels by concurrency, then
// open-loop levels by rate (a campaign sweeps one kind, so the two never
// meet in one table). It suits slices.SortFunc.
func (l Level) Compare(o Level) int {
	if r := cmp.Compare(b2i(IsRate(l))+b2i(IsSpeed(l)), b2i(IsRate(o))+b2i(IsSpeed(o))); r != 0 {
		return r
	}
	return cmp.Or(cmp.Compare(l.Concurrency, o.Concurrency), cmp.Compare(l.Rate, o.Rate), cmp.Compare(l.Speed, o.Speed))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FormatRate writes a rate in requests per second without trailing zeros.
func FormatRate(rate float64) string { return strconv.FormatFloat(rate, 'f', -1, 64) }

// LevelName is how people read a level: "C=4" or "4 req/s".
func LevelName(l Level) string {
	if IsSpeed(l) {
		return "speed " + FormatRate(l.Speed) + "×"
	}
	if IsRate(l) {
		return FormatRate(l.Rate) + " req/s"
	}
	return fmt.Sprintf("C=%d", l.Concurrency)
}

// String is LevelName.
func (l Level) String() string { return LevelName(l) }

// LevelLabel is the short form for table columns and plot ticks: "4" for
// a concurrency, "4/s" for a rate.
func LevelLabel(l Level) string {
	if IsSpeed(l) {
		return FormatRate(l.Speed) + "×"
	}
	if IsRate(l) {
		return FormatRate(l.Rate) + "/s"
	}
	return strconv.Itoa(l.Concurrency)
}

// Key is the number a level is written as (MarshalJSON): the concurrency,
// or for a rate 10⁹ plus the rate in thousandths. It is the same in every
// version, so a random stream seeded with it draws the same numbers.
func (l Level) Key() int64 {
	if IsSpeed(l) {
		return speedKeyBase + rateThousandths(l.Speed)
	}
	if IsRate(l) {
		return rateKeyBase + rateThousandths(l.Rate)
	}
	return int64(l.Concurrency)
}

// levelOfKey is the level a written number names.
func levelOfKey(k int64) Level {
	if k >= speedKeyBase {
		return Level{Speed: float64(k-speedKeyBase) / perRequest}
	}
	if k >= rateKeyBase {
		return Level{Rate: float64(k-rateKeyBase) / perRequest}
	}
	return ConcurrencyLevel(int(k))
}

// MarshalJSON writes the level as one number (Key), as every run directory
// and verdict has held it, so that files written now and files written
// before read alike, by this version and by older ones.
func (l Level) MarshalJSON() ([]byte, error) { return strconv.AppendInt(nil, l.Key(), 10), nil }

// UnmarshalJSON reads a level written by MarshalJSON.
func (l *Level) UnmarshalJSON(b []byte) error {
	var k int64
	if err := json.Unmarshal(b, &k); err != nil {
		return fmt.Errorf("reading a level: %w", err)
	}
	*l = levelOfKey(k)
	return nil
}
