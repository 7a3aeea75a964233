package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// nights writes n nightly runs of a baseline-only campaign (levels 1 and
// 10, three rounds, 1% launch noise, each night its own 1% run
// effect), the runs from stepAt on (1-based; 0: none) slowed by step, and
// returns them in the order they ran, a day apart.
func nights(t *testing.T, n, stepAt int, step float64, seed uint64) []*results.Run {
	t.Helper()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(seed, 99))
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 10}
	s.Requests = 40
	var out []*results.Run
	for i := 1; i <= n; i++ {
		e := verdicttest.Baseline
		e.LaunchSigma = 0.01
		e.Slowdown = math.Exp(0.01 * r.NormFloat64())
		if stepAt > 0 && i >= stepAt {
			e.Slowdown *= step
		}
		run, err := verdicttest.WriteCampaign(filepath.Join(dir, fmt.Sprintf("night-%02d", i)), []string{"baseline"},
			[]verdicttest.Engine{e}, s, 3, seed*100+uint64(i), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		run.Manifest.Started = time.Date(2026, 11, i, 2, 0, 0, 0, time.UTC)
		out = append(out, run)
	}
	return out
}

// TestHistoryFindsTheStep: 12 nights with the baseline 6% slower from night
// 8 on: the change is placed at night 8 (±1), about −6%, in every one of
// 5 histories; and 20 histories of 12 nights without a step name at most
// one change point among them.
func TestHistoryFindsTheStep(t *testing.T) {
	for k := range 5 {
		s, err := Of(nights(t, 12, 8, 1/0.94, uint64(10+k)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range s.Changes {
			t.Logf("history %d: change at night %d, %+.1f%%, p=%.3f", k, ch.Index+1, ch.DeltaPct, ch.P)
		}
		if len(s.Changes) != 1 || s.Changes[0].Index < 6 || s.Changes[0].Index > 8 ||
			s.Changes[0].DeltaPct > -4 || s.Changes[0].DeltaPct < -8 {
			t.Errorf("history %d: changes %+v, want one at night 8 (index 7) of about −6%%", k, s.Changes)
		}
	}
	falseAlarms := 0
	for k := range 20 {
		s, err := Of(nights(t, 12, 0, 1, uint64(100+k)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		falseAlarms += len(s.Changes)
	}
	t.Logf("change points in 20 histories without a step: %d", falseAlarms)
	if falseAlarms > 1 {
		t.Errorf("%d change points in 20 histories without a step, want at most 1", falseAlarms)
	}
}

// TestHistoryOf: the series follows the newest run's baseline on its host
// and sweep, oldest first; a run of another host is left out with why; a
// level or scenario nobody measured, or a single run, is an error naming
// what there is.
func TestHistoryOf(t *testing.T) {
	runs := nights(t, 3, 0, 1, 7)
	runs[0], runs[2] = runs[2], runs[0] // any order in
	other := nights(t, 1, 0, 1, 8)[0]
	other.Manifest.Host.Name = "elsewhere"
	s, err := Of(append(runs, other), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Scenario != "baseline" || len(s.Points) != 3 || !s.Points[0].Started.Before(s.Points[2].Started) ||
		len(s.Levels) != 2 || len(s.Skipped) != 1 || len(s.Points[0].Figures) != 2 {
		t.Errorf("series %+v", s)
	}
	c := measure.ConcurrencyLevel(10)
	if s, err := Of(runs, Options{Level: &c}); err != nil || len(s.Levels) != 1 {
		t.Errorf("one level: %v, %+v", err, s)
	}
	for _, tc := range []struct {
		o    Options
		runs []*results.Run
		want string
	}{
		{Options{Scenario: "eagle"}, runs, `no run has a scenario "eagle" (the runs have baseline)`},
		{Options{Level: new(measure.ConcurrencyLevel(3))}, runs, "no run measured baseline at C=3"},
		{Options{}, runs[:1], "1 run of baseline on a host the runs do not name to draw a history from; it needs 2"},
	} {
		if _, err := Of(tc.runs, tc.o); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: error %v, want %q", tc.o, err, tc.want)
		}
	}
}
