package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// sessionsShown is validate's line for a sweep of multi-turn sessions: what
// a level counts, the mean turns and think time, and where the messages
// come from.
func sessionsShown(s campaign.Sweep) string {
	ss := s.Sessions
	users := "levels are concurrent users"
	if len(s.Rates) > 0 {
		users = "levels are sessions arriving per second"
	}
	source := func(d *prompts.Dist) string {
		if d == nil {
			return "from the prompts"
		}
		return d.String() + " tokens of built-in text"
	}
	think := "none"
	if !(ss.Think.Kind == prompts.DistFixed && ss.Think.Value == 0) {
		think = fmt.Sprintf("mean %s (%s ms)", ss.MeanThink().Round(time.Millisecond), ss.Think)
	}
	return fmt.Sprintf("sessions: mean %s turns (%s), think time %s; first message %s, follow-ups %s; %s",
		strconv.FormatFloat(ss.MeanTurns(), 'g', 4, 64), ss.Turns, think, source(ss.First), source(ss.FollowUp), users)
}
