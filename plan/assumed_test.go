package plan

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// twoScenarios is a campaign of two scenarios with the sweep and health
// timeout given.
func twoScenarios(s campaign.Sweep, health time.Duration) *campaign.Campaign {
	return &campaign.Campaign{
		Name: "c", Sweep: s, Rounds: 6, EquivalenceMarginPct: 2,
		Engine:    campaign.EngineOpts{HealthTimeout: health, StopGrace: 30 * time.Second},
		Scenarios: []*campaign.Scenario{{Name: "a"}, {Name: "b"}},
	}
}

// TestAssumedPrior: before any run the load is a third of the health
// timeout, at most AssumedLoad, and the source says it is assumed.
func TestAssumedPrior(t *testing.T) {
	s := campaign.Sweep{Concurrency: []int{1, 4}, MaxTokens: 100, Warmup: 2}
	for _, tc := range []struct {
		health time.Duration
		load   float64
	}{
		{5 * time.Minute, 100},
		{30 * time.Minute, 600},
		{2 * time.Hour, AssumedLoad.Seconds()},
	} {
		p := AssumedPrior(twoScenarios(s, tc.health))
		if math.Abs(p.Load-tc.load) > 1e-9 || !p.Assumed || !strings.HasPrefix(p.Source, "assumed: ") {
			t.Errorf("health_timeout %s: %+v, want a load of %gs, assumed", tc.health, p, tc.load)
		}
		if want := 30 + 2*100/AssumedStreamTokensPerSec; math.Abs(p.Overhead-want) > 1e-9 {
			t.Errorf("health_timeout %s: overhead %g s, want the stop grace and the warm-up, %g s", tc.health, p.Overhead, want)
		}
	}
}

// TestBefore: the levels' minima are the requests the sweep sends (a
// number written, or the `auto` rule's), the costs are the prior's where
// it has them, and every level has a finite cost, a trace's speeds and an
// open loop's rates too.
func TestBefore(t *testing.T) {
	c1, c4 := measure.ConcurrencyLevel(1), measure.ConcurrencyLevel(4)
	prior := Prior{Load: 60, Overhead: 5, PerRequest: map[measure.Level]float64{c1: 0.5}, Source: "a test"}
	in := Before(twoScenarios(campaign.Sweep{Concurrency: []int{1, 4}, MaxTokens: 100, Requests: 40}, time.Hour), Goal{}, prior)
	if in.Launch != 65 || in.Scenarios != 2 || in.Goal.MaxRounds != 6 || in.Goal.Family != 2 {
		t.Errorf("inputs %+v", in)
	}
	if l := in.Levels[0]; l.Min != 40 || l.PerRequest != 0.5 {
		t.Errorf("C=1: %+v, want 40 requests at the prior's 0.5 s", l)
	}
	if l := in.Levels[1]; l.Min != 40 || l.PerRequest != AssumedPerRequest(campaign.Sweep{MaxTokens: 100}, c4) {
		t.Errorf("C=4: %+v, want 40 requests at the assumed stream speed", l)
	}
	auto := Before(twoScenarios(campaign.Sweep{Concurrency: []int{1, 70}, MaxTokens: 100}, time.Hour), Goal{}, prior)
	if auto.Levels[1].Min != measure.RequestsAt(0, measure.ConcurrencyLevel(70)) {
		t.Errorf("auto: C=70 takes %d requests", auto.Levels[1].Min)
	}
	for _, s := range []campaign.Sweep{
		{Rates: []float64{0.5, 2}, MaxTokens: 100},
		{Speeds: []float64{1, 2}, TraceRows: 200, TraceSpan: 10 * time.Minute, MaxTokens: 100},
	} {
		in := Before(twoScenarios(s, time.Hour), Goal{}, AssumedPrior(twoScenarios(s, time.Hour)))
		for _, l := range in.Levels {
			if l.PerRequest <= 0 || math.IsInf(l.PerRequest, 0) || math.IsNaN(l.PerRequest) {
				t.Errorf("%s: %g s a request", measure.LevelName(l.Key), l.PerRequest)
			}
		}
		if p := NextScaled(in); math.IsInf(p.Seconds, 0) || math.IsNaN(p.Seconds) {
			t.Errorf("%v: the plan takes %g s", s.Levels(), p.Seconds)
		}
	}
	// A trace at twice its pace takes half its span.
	tr := campaign.Sweep{Speeds: []float64{2}, TraceRows: 200, TraceSpan: 10 * time.Minute, MaxTokens: 100}
	if got := AssumedPerRequest(tr, measure.SpeedLevel(2)) * 200; math.Abs(got-300) > 1e-9 {
		t.Errorf("a 10-minute trace at 2×: %g s", got)
	}
}
