package measure

// A trace replay's levels are speeds: the trace's recorded timestamps
// divided by the speed, so 2 sends the same requests in half the time.
const (
	// MaxSpeed is the fastest a trace is replayed, times its recorded pace.
	MaxSpeed = 1000
	// speedKeyBase is where speed levels start in the numbers written to
	// JSON: above every rate key (rateKeyBase + MaxRate in thousandths is
	// 2×10⁹), with the speed in thousandths added, so a run written before
	// speeds existed reads as it always did and levels still sort in load
	// order as numbers.
	speedKeyBase = 3_000_000_000
)

// SpeedLevel is the replay of a trace at speed times its recorded pace,
// rounded to RateResolution.
func SpeedLevel(speed float64) Level {
	return Level{Speed: float64(rateThousandths(speed)) / perRequest}
}

// IsSpeed reports whether l is a trace replay's level.
func IsSpeed(l Level) bool { return l.Speed > 0 }

// LevelAxis names what a sweep's levels measure, for a column head or a
// plot axis: "C", "req/s" or "speed".
func LevelAxis(l Level) string {
	switch {
	case IsSpeed(l):
		return "speed"
	case IsRate(l):
		return "req/s"
	}
	return "C"
}
