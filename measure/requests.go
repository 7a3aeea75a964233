package measure

import (
	"fmt"
	"math"
)

// MinAutoRequests and AutoRequestsPerSlot size an automatic level:
// max(MinAutoRequests, AutoRequestsPerSlot×C) measured requests, so every
// level has a steady state well past its ramp-up: about three turnovers of
// full load from C=8 up, more below.
const (
	MinAutoRequests     = 30
	AutoRequestsPerSlot = 4
)

// AutoRule is the `auto` request count as people read it.
var AutoRule = fmt.Sprintf("max(%d, %d×C)", MinAutoRequests, AutoRequestsPerSlot)

// RequestsFor is the number of measured requests at concurrency c for a
// configured count: the count itself, or, when it is 0 (`auto`),
// max(MinAutoRequests, AutoRequestsPerSlot×c).
func RequestsFor(requests, c int) int {
	if requests > 0 {
		return requests
	}
	return max(MinAutoRequests, AutoRequestsPerSlot*c)
}

// AutoRateSeconds sizes an automatic open-loop level: enough requests to
// arrive over about this many seconds, and at least MinAutoRequests, so a
// queue that grows has time to show it.
const AutoRateSeconds = 60

// AutoRateRule is the `auto` request count of a rate level as people read it.
var AutoRateRule = fmt.Sprintf("max(%d, %d s × rate)", MinAutoRequests, AutoRateSeconds)

// RequestsForRate is the number of measured requests at an arrival rate
// (requests per second) for a configured count: the count itself, or, when
// it is 0 (`auto`), max(MinAutoRequests, ⌈AutoRateSeconds×rate⌉).
func RequestsForRate(requests int, rate float64) int {
	if requests > 0 {
		return requests
	}
	return max(MinAutoRequests, int(math.Ceil(AutoRateSeconds*rate-1e-9)))
}

// RequestsAt is the number of measured requests at a level, any kind. A
// trace's level sends every row of the trace, which only the trace knows:
// its callers pass the row count as requests.
func RequestsAt(requests int, level Level) int {
	if IsSpeed(level) {
		return requests
	}
	if IsRate(level) {
		return RequestsForRate(requests, level.Rate)
	}
	return RequestsFor(requests, level.Concurrency)
}
