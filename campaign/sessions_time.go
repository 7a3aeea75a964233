package campaign

import (
	"math"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// SessionTime is the least time one level of a sessions sweep takes
// however fast the server: its users' think times and, in an open loop, the
// arrivals of its sessions. A closed loop's C users think side by side, so
// the think times of the level's follow-up turns count once per C; an open
// loop's sessions arrive at the level's rate, and the last one still runs
// its turns' think times after it arrives. 0 without sessions.
func (s Sweep) SessionTime(lv measure.Level) time.Duration {
	if s.Sessions == nil {
		return 0
	}
	turns := max(s.Sessions.MeanTurns(), 1)
	think := s.Sessions.MeanThink().Seconds()
	requests := float64(s.RequestsAt(lv))
	sessions := math.Ceil(requests / turns)
	var secs float64
	if measure.IsRate(lv) {
		secs = (sessions-1)/lv.Rate + (turns-1)*think
	} else {
		secs = (requests - sessions) * think / float64(max(lv.Concurrency, 1))
	}
	return time.Duration(max(secs, 0) * float64(time.Second))
}
