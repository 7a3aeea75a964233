package campaign

import (
	"reflect"
	"testing"
	"time"
)

// TestBudgetKeys: budget is a duration, deadline a time of day; they are
// exclusive, refused with file:line:col when wrong, and neither is in the
// fingerprint.
func TestBudgetKeys(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    memFiles
		budget   time.Duration
		deadline *Clock
		wantErrs []string
	}{
		{name: "absent", files: goodFiles},
		{name: "budget", files: top("budget: 8h\n"), budget: 8 * time.Hour},
		{name: "deadline", files: top("deadline: \"07:00\"\n"), deadline: &Clock{7, 0}},
		{name: "deadline one digit", files: top("deadline: 6:30\n"), deadline: &Clock{6, 30}},
		{name: "budget zero", files: top("budget: 0s\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:9: budget: must be longer than 0, got 0s`}},
		{name: "budget a number", files: top("budget: 8\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:9: budget: unparsable duration "8" (want e.g. 200ms, 30s, 5m, 1h30m)`}},
		{name: "deadline not a time", files: top("deadline: 7am\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:11: deadline: unparsable time of day "7am" (want hh:mm, 24-hour, e.g. "07:00")`}},
		{name: "both", files: top("budget: 8h\ndeadline: \"07:00\"\n"),
			wantErrs: []string{`c/configs/camp.yaml:10:11: deadline: give budget (a duration) or deadline (a time of day), not both`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Fatalf("errors:\n got: %q\nwant: %q", errs, tc.wantErrs)
			}
			if c == nil {
				return
			}
			if c.Budget != tc.budget || !reflect.DeepEqual(c.Deadline, tc.deadline) {
				t.Errorf("budget %s deadline %v, want %s %v", c.Budget, c.Deadline, tc.budget, tc.deadline)
			}
			if base, _ := loadMem(t, goodFiles); base.Fingerprint() != c.Fingerprint() {
				t.Error("a budget changed the sweep fingerprint")
			}
		})
	}
}

// TestClockNext: a deadline is on the local clock of the machine running
// bakeoff; one earlier than now is tomorrow's.
func TestClockNext(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	at := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, loc) }
	for _, tc := range []struct {
		now  time.Time
		c    Clock
		want time.Time
	}{
		{at(10, 22, 0), Clock{7, 0}, at(11, 7, 0)},
		{at(11, 1, 0), Clock{7, 0}, at(11, 7, 0)},
		{at(11, 7, 0), Clock{7, 0}, at(12, 7, 0)}, // now is not before itself
		{at(31, 23, 30), Clock{0, 15}, time.Date(2026, 4, 1, 0, 15, 0, 0, loc)},
	} {
		if got := tc.c.Next(tc.now); !got.Equal(tc.want) {
			t.Errorf("%s.Next(%s) = %s, want %s", tc.c, tc.now, got, tc.want)
		}
	}
	c := &Campaign{Budget: 8 * time.Hour}
	if end, ok := c.End(at(10, 22, 0)); !ok || !end.Equal(at(11, 6, 0)) {
		t.Errorf("End with budget = %s %v", end, ok)
	}
	if _, ok := (&Campaign{}).End(at(10, 22, 0)); ok {
		t.Error("End without budget or deadline is ok")
	}
}

func TestParseBudgetAndClock(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{{"8h", 8 * time.Hour, true}, {" 7h30m ", 450 * time.Minute, true}, {"0", 0, false}, {"-1h", 0, false}, {"8", 0, false}} {
		got, err := ParseBudget(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseBudget(%q) = %s, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{{"07:00", true}, {"23:59", true}, {"24:00", false}, {"7", false}, {"07:60", false}} {
		if _, err := ParseClock(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParseClock(%q): %v", tc.in, err)
		}
	}
}
