package campaign

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Clock is a time of day, hh:mm, on the clock of the machine running
// bakeoff, in its local time zone: a deadline a person writes in the
// evening for the morning, not a remote host's clock.
type Clock struct{ Hour, Minute int }

// ParseClock reads "07:00" or "7:00" (24-hour).
func ParseClock(s string) (Clock, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return Clock{}, fmt.Errorf("unparsable time of day %q (want hh:mm, 24-hour, e.g. \"07:00\")", s)
	}
	return Clock{t.Hour(), t.Minute()}, nil
}

func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

// Next is the first moment at c after now, on now's clock and time zone:
// today, or tomorrow when that time has passed (a deadline earlier than now
// means tomorrow morning). Across a change of daylight saving time it is
// the wall-clock time, as a person reads it.
func (c Clock) Next(now time.Time) time.Time {
	t := time.Date(now.Year(), now.Month(), now.Day(), c.Hour, c.Minute, 0, 0, now.Location())
	if !t.After(now) {
		t = time.Date(now.Year(), now.Month(), now.Day()+1, c.Hour, c.Minute, 0, 0, now.Location())
	}
	return t
}

// ParseBudget reads a budget such as "8h" or "7h30m": a Go duration longer
// than zero.
func ParseBudget(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("unparsable budget %q (want e.g. 8h, 7h30m, 90m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("budget %q: must be longer than 0", s)
	}
	return d, nil
}

// End is when a campaign started at start must have finished: start plus
// the budget, or the deadline's next occurrence after start; ok is false
// when the campaign has neither.
func (c *Campaign) End(start time.Time) (end time.Time, ok bool) {
	switch {
	case c.Deadline != nil:
		return c.Deadline.Next(start), true
	case c.Budget > 0:
		return start.Add(c.Budget), true
	}
	return time.Time{}, false
}

// budget decodes budget:; the campaign refuses it beside deadline:.
func (d *doc) budget(v *yaml.Node, c *Campaign) {
	if b, ok := d.positiveDuration(v, "budget"); ok {
		c.Budget = b
	}
}

// deadline decodes deadline: as a Clock.
func (d *doc) deadline(v *yaml.Node, c *Campaign) {
	s, ok := d.str(v, "deadline")
	if !ok {
		return
	}
	clk, err := ParseClock(s)
	if err != nil {
		d.errorf(v, "deadline: %v", err)
		return
	}
	c.Deadline = &clk
}
