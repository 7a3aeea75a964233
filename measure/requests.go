package measure

import "fmt"

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
