package orchestrator

import (
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// TestSweepEstimate: before a launch is measured, the deadline estimate
// counts the sweep, at AssumedStreamTokS (20 tokens/s): 100 tokens are 5 s
// a request.
func TestSweepEstimate(t *testing.T) {
	for _, tt := range []struct {
		name  string
		sweep campaign.Sweep
		want  time.Duration
	}{
		{"one request at a time, the warm-up first",
			campaign.Sweep{Concurrency: []int{1}, Requests: 8, MaxTokens: 100, Warmup: 1}, 45 * time.Second},
		{"a level sends its requests in waves of its concurrency",
			campaign.Sweep{Concurrency: []int{1, 4}, Requests: 8, MaxTokens: 100, Warmup: 1}, 55 * time.Second},
		{"a last wave that is not full takes as long",
			campaign.Sweep{Concurrency: []int{3}, Requests: 8, MaxTokens: 100}, 15 * time.Second},
		{"repeats run every level again",
			campaign.Sweep{Concurrency: []int{1, 4}, Requests: 8, MaxTokens: 100, Warmup: 1, Repeats: 2}, 105 * time.Second},
		{"an open loop: its arrivals, then its last request",
			campaign.Sweep{Rates: []float64{2}, Requests: 9, MaxTokens: 20}, 5 * time.Second},
		{"longer requests, longer sweeps",
			campaign.Sweep{Concurrency: []int{1}, Requests: 8, MaxTokens: 1000}, 400 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sweepEstimate(tt.sweep); got != tt.want {
				t.Errorf("sweepEstimate = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestLaunchEstimateBeforeAnyLaunch: with no launch measured, one launch is
// estimated at the campaign's bound on its waits plus its sweep; once
// launches are measured, at their mean.
func TestLaunchEstimateBeforeAnyLaunch(t *testing.T) {
	c := &campaign.Campaign{
		Engine: campaign.EngineOpts{HealthTimeout: time.Minute, StopGrace: 10 * time.Second},
		GPU:    campaign.GPUOpts{WaitTimeout: 20 * time.Second},
		Sweep:  campaign.Sweep{Concurrency: []int{1}, Requests: 8, MaxTokens: 100, Warmup: 1},
	}
	o := &orch{c: c}
	if got, _ := o.launchEstimate(); got != 110*time.Second+45*time.Second {
		t.Errorf("before any launch: %s, want 1m50s of waits and 45s of sweep", got)
	}
	o.launchSecs = []float64{30, 50}
	if got, _ := o.launchEstimate(); got != 40*time.Second {
		t.Errorf("after two launches of 30 s and 50 s: %s, want their mean, 40s", got)
	}
}
