package results

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestLaunchesPreRounds: a run written before rounds reads as one round,
// each scenario's figures from its newest complete attempt, in the order
// the campaign listed them.
func TestLaunchesPreRounds(t *testing.T) {
	run, err := ReadRun(filepath.Join("..", "testdata", "pre-rounds-run"))
	if err != nil {
		t.Fatal(err)
	}
	if n := run.Rounds(); n != 1 {
		t.Errorf("Rounds() = %d, want 1", n)
	}
	for _, tc := range []struct {
		name, dir   string
		order, recs int
	}{
		{"baseline", "baseline", 0, 65},
		{"eagle3", "eagle3/history/1", 1, 65},
	} {
		ls := run.Launches(tc.name)
		if len(ls) != 1 {
			t.Fatalf("%s: %d launches, want 1", tc.name, len(ls))
		}
		l := ls[0]
		if l.Scenario != tc.name || l.Round != 1 || l.Order != tc.order || l.Dir != tc.dir || l.Result.Status != StatusOK {
			t.Errorf("%s: launch %+v, want round 1, order %d, dir %s, status ok", tc.name, l, tc.order, tc.dir)
		}
		recs, err := run.LaunchRecords(l)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != tc.recs {
			t.Errorf("%s: %d records, want %d", tc.name, len(recs), tc.recs)
		}
	}
}

// TestLaunchesRounds: with rounds, one launch per round that has a result,
// in round order whatever the summary's order, each from its round's newest
// complete attempt, placed by the manifest's launch order.
func TestLaunchesRounds(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := func(name string, round, attempt int, status string, hist ...ScenarioResult) ScenarioResult {
		d := LaunchDir(name, round)
		return ScenarioResult{Name: name, Round: round, Attempt: attempt, Status: status, Dir: d, History: hist,
			Started: at, Ended: at}
	}
	old := func(r ScenarioResult) ScenarioResult {
		r.Dir = LaunchHistoryDir(r.Name, r.Round, r.Attempt)
		return r
	}
	m := Manifest{Campaign: "c", Scenarios: []string{"a", "b", "c"}, Rounds: 3,
		Order: [][]string{{"a", "b", "c"}, {"c", "b", "a"}, {"b", "c", "a"}}}
	sum := Summary{Campaign: "c", Scenarios: []ScenarioResult{
		res("a", 1, 1, StatusOK),
		res("b", 3, 1, StatusOK),
		res("b", 1, 1, StatusOK),
		// b's round 2 was rerun and the rerun failed: the first attempt stands.
		res("b", 2, 2, StatusFailed, old(res("b", 2, 1, StatusOK))),
		res("a", 2, 1, StatusPending),
	}}
	if err := WriteJSONAtomic(filepath.Join(dir, ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSONAtomic(filepath.Join(dir, SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	const line = `{"level":1,"seq":0,"send_ns":1,"end_ns":2,"tokens":24,"status":200}` + "\n"
	if err := WriteFileAtomic(filepath.Join(dir, "b", "round-2", "history", "1", RequestsFile), []byte(line+line)); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Round, Order, Attempt int
		Status, Dir           string
	}
	summarize := func(ls []Launch) []got {
		var out []got
		for _, l := range ls {
			if l.Scenario == "" {
				t.Errorf("launch without a scenario: %+v", l)
			}
			out = append(out, got{l.Round, l.Order, l.Result.Attempt, l.Result.Status, l.Dir})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		want []got
	}{
		{"a", []got{{1, 0, 1, StatusOK, "a/round-1"}, {2, 5, 1, StatusPending, "a/round-2"}}},
		{"b", []got{{1, 1, 1, StatusOK, "b/round-1"}, {2, 4, 1, StatusOK, "b/round-2/history/1"},
			{3, 6, 1, StatusOK, "b/round-3"}}},
		{"c", nil},
	} {
		if g := summarize(run.Launches(tc.name)); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("%s: launches\n got %+v\nwant %+v", tc.name, g, tc.want)
		}
	}
	recs, err := run.LaunchRecords(run.Launches("b")[1])
	if err != nil || len(recs) != 2 {
		t.Errorf("records of b's round 2: %d, %v; want 2", len(recs), err)
	}
	if n := run.Rounds(); n != 3 {
		t.Errorf("Rounds() = %d, want 3", n)
	}
}
