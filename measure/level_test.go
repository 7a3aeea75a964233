package measure

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestLevel(t *testing.T) {
	tests := []struct {
		level       Level
		name, label string
		value       float64
		isRate      bool
		json        string
	}{
		{ConcurrencyLevel(4), "C=4", "4", 4, false, "4"},
		{RateLevel(0.5), "0.5 req/s", "0.5/s", 0.5, true, "1000000500"},
		{RateLevel(12), "12 req/s", "12/s", 12, true, "1000012000"},
		{RateLevel(0.1 + 0.2), "0.3 req/s", "0.3/s", 0.3, true, "1000000300"},
		{RateLevel(2.0004), "2 req/s", "2/s", 2, true, "1000002000"},
		{SpeedLevel(0.5), "speed 0.5×", "0.5×", 0.5, true, "3000000500"},
		{SpeedLevel(2), "speed 2×", "2×", 2, true, "3000002000"},
	}
	for _, tt := range tests {
		l := tt.level
		if LevelName(l) != tt.name || l.String() != tt.name || LevelLabel(l) != tt.label || LevelValue(l) != tt.value || IsRate(l) != tt.isRate {
			t.Errorf("%#v: %q %q %v %v", l, LevelName(l), LevelLabel(l), LevelValue(l), IsRate(l))
		}
		b, err := json.Marshal(l)
		if err != nil || string(b) != tt.json {
			t.Errorf("%s as JSON: %s (%v), want %s", l, b, err, tt.json)
		}
		var back Level
		if err := json.Unmarshal(b, &back); err != nil || back != l {
			t.Errorf("%s read back: %#v (%v)", l, back, err)
		}
	}
	if RateLevel(0.3) != RateLevel(0.1+0.2) {
		t.Error("one rate, two keys")
	}
	got := []Level{SpeedLevel(0.5), RateLevel(1), ConcurrencyLevel(100000), RateLevel(0.5), ConcurrencyLevel(2)}
	slices.SortFunc(got, Level.Compare)
	want := []Level{ConcurrencyLevel(2), ConcurrencyLevel(100000), RateLevel(0.5), RateLevel(1), SpeedLevel(0.5)}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v: rates by rate, above every concurrency", got, want)
	}
}

// TestLevelReadsOldRecords: a record and a level summary as runs before the
// typed level wrote them read back to the same level, and write the same
// number again.
func TestLevelReadsOldRecords(t *testing.T) {
	for _, tt := range []struct {
		line string
		want Level
	}{
		{`{"level":8,"repeat":0,"seq":3,"send_ns":1,"end_ns":2}`, ConcurrencyLevel(8)},
		{`{"level":1000002500,"rate":2.5,"repeat":1,"seq":0,"send_ns":1,"end_ns":2}`, RateLevel(2.5)},
	} {
		var r Record
		if err := json.Unmarshal([]byte(tt.line), &r); err != nil || r.Level != tt.want {
			t.Errorf("%s: level %#v (%v), want %#v", tt.line, r.Level, err, tt.want)
		}
		var s LevelSummary
		if err := json.Unmarshal([]byte(tt.line), &s); err != nil || s.Level != tt.want {
			t.Errorf("%s as a summary: level %#v (%v), want %#v", tt.line, s.Level, err, tt.want)
		}
		var m map[string]any
		b, _ := json.Marshal(r)
		json.Unmarshal(b, &m)
		var old map[string]any
		json.Unmarshal([]byte(tt.line), &old)
		if m["level"] != old["level"] {
			t.Errorf("%s written again: level %v", tt.line, m["level"])
		}
	}
}
