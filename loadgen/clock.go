package loadgen

import "time"

// epoch anchors record times: Unix nanoseconds read once, advanced by the
// monotonic clock, so a wall-clock step during a sweep cannot bend a latency.
var (
	epoch   = time.Now()
	epochNs = epoch.UnixNano()
)

// nowNs is the current time in Unix nanoseconds on the monotonic base.
func nowNs() int64 { return epochNs + int64(time.Since(epoch)) }
