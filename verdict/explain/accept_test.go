package explain

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// acceptLaunch is one launch at C=2 of n requests, each of 60 tokens in
// steps verify steps, category cat for the odd ones, whose sweep wrote the
// summary figure summary (0: none) with source src.
func acceptLaunch(round, n, steps int, withCounts bool, summary float64, src string) records.Launch {
	c := measure.ConcurrencyLevel(2)
	l := records.Launch{Round: round, Result: &results.ScenarioResult{}}
	for i := range n {
		send := int64(i/2) * 1e9
		r := measure.Record{Level: c, Seq: i, SendNs: send, FirstNs: send + 1e6, EndNs: send + 1e9, Tokens: 60}
		if i%2 == 1 {
			r.Category = "code"
		}
		if withCounts {
			r.VerifySteps, r.AcceptHistogram = new(steps), []int{steps / 2, steps - steps/2}
		}
		l.Records = append(l.Records, r)
	}
	ls := measure.LevelSummary{Level: c, AcceptLengthSource: src}
	if summary > 0 {
		ls.AcceptLength = new(summary)
	}
	l.Result.Levels = []measure.LevelSummary{ls}
	return l
}

// TestLevelAccept: a level's accept length is each launch's token-weighted
// figure, their geometric mean with a t interval across launches, its
// source named; from the sweeps' counter figures where the records carry
// no counts; none where neither has one.
func TestLevelAccept(t *testing.T) {
	c := measure.ConcurrencyLevel(2)
	const src = "each response's sglext.spec_tokens_details"
	geo := math.Cbrt(2 * 2.5 * 3)
	tests := []struct {
		name     string
		launches []records.Launch
		want     []float64 // per launch
		center   float64
		source   string
		interval bool
	}{
		{"from the requests", []records.Launch{
			acceptLaunch(1, 8, 30, true, 1.9, src), acceptLaunch(2, 8, 24, true, 2.4, src), acceptLaunch(3, 8, 20, true, 2.9, src),
		}, []float64{2, 2.5, 3}, geo, src, true},
		{"one launch: no interval", []records.Launch{acceptLaunch(1, 8, 24, true, 0, "")}, []float64{2.5}, 2.5, SourceRequests, false},
		{"from the sweeps' counters", []records.Launch{
			acceptLaunch(1, 8, 0, false, 2, "sglang counters"), acceptLaunch(2, 8, 0, false, 2.5, "sglang counters"),
			acceptLaunch(3, 8, 0, false, 3, "sglang counters"),
		}, []float64{2, 2.5, 3}, geo, "sglang counters", true},
		{"none", []records.Launch{acceptLaunch(1, 8, 0, false, 0, "")}, nil, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := levelAccept(tt.launches, c, 0.95)
			if tt.want == nil {
				if a != nil {
					t.Fatalf("accept %+v from nothing", a)
				}
				return
			}
			if a == nil {
				t.Fatal("no accept length")
			}
			for i, w := range tt.want {
				if i >= len(a.Launches) || math.Abs(a.Launches[i]-w) > 1e-9 {
					t.Fatalf("launches %v, want %v", a.Launches, tt.want)
				}
			}
			e := a.Length
			if math.Abs(e.Center-tt.center) > 1e-9 || a.Source != tt.source {
				t.Errorf("center %v from %q, want %v from %q", e.Center, a.Source, tt.center, tt.source)
			}
			if got := e.Lo < e.Center && e.Center < e.Hi; got != tt.interval || (!tt.interval && (e.Lo != e.Center || e.Hi != e.Center)) {
				t.Errorf("interval [%v, %v] around %v, want one: %v", e.Lo, e.Hi, e.Center, tt.interval)
			}
		})
	}
	// Per category and per position, from the requests.
	a := levelAccept([]records.Launch{acceptLaunch(1, 8, 30, true, 0, ""), acceptLaunch(2, 8, 24, true, 0, "")}, c, 0.95)
	if len(a.Categories) != 2 || a.Categories[1].Category != "code" || a.Categories[1].Length.N != 2 {
		t.Fatalf("categories %+v, want '' and code over 2 launches", a.Categories)
	}
	if len(a.PositionRates) != 1 || math.Abs(a.PositionRates[0]-0.5) > 1e-9 {
		t.Errorf("position rates %v, want [0.5]: half the steps accepted their draft", a.PositionRates)
	}
}
