package plan

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// threeLevels is a campaign of two scenarios at C=1, 10 and 70 (`auto`
// counts 30, 40 and 280, ten times that at most), ten-minute launches,
// the noise split as given at 30 requests for every level, and rounds
// rounds already run at the auto counts.
func threeLevels(launchSD, withinSD float64, rounds, maxRounds int) Inputs {
	in := Inputs{Launch: 600, Scenarios: 2, Goal: Goal{MarginPct: 2, Family: 3, MinRounds: 3, MaxRounds: maxRounds}}
	for j, c := range []int{1, 10, 70} {
		lv := measure.ConcurrencyLevel(c)
		auto := measure.RequestsAt(0, lv)
		in.Levels = append(in.Levels, Level{Key: lv, PerRequest: 2 / float64(c), Min: auto, Max: auto * DefaultMaxScale})
		in.Noise = append(in.Noise, Noise{Level: j, Launch: launchSD * launchSD, Within: withinSD * withinSD * 30})
	}
	for range rounds {
		in.Past = append(in.Past, in.scaled(1))
	}
	return in
}

// TestNextScaledIsTheQuickestMultiple: the plan's requests are one
// multiple of every level's minimum, the rule is expected to have closed
// every comparison by its end, and no other number of rounds and multiple
// (at least the floor) by whose end it is expected to is quicker: checked
// against every pair.
func TestNextScaledIsTheQuickestMultiple(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		launchSD, withinSD     float64
		rounds, maxRounds      int
		wantReached, wantScale bool
	}{
		{"within-launch noise", 0.004, 0.03, 3, 12, true, true},
		{"launch noise", 0.02, 0.005, 3, 30, true, false},
		{"before any round", 0.01, 0.02, 0, 12, true, true},
		{"out of reach", 0.06, 0.06, 3, 4, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := threeLevels(tc.launchSD, tc.withinSD, tc.rounds, tc.maxRounds)
			p := NextScaled(in)
			t.Log(p)
			if p.Reached != tc.wantReached || (p.Scale > 1) != tc.wantScale {
				t.Fatalf("reached %v, scale %d; want reached %v, a scale above 1 %v", p.Reached, p.Scale, tc.wantReached, tc.wantScale)
			}
			for j, l := range in.Levels {
				if p.Requests[j] != p.Scale*l.Min {
					t.Errorf("%s: %d requests, not %d × %d", measure.LevelName(l.Key), p.Requests[j], p.Scale, l.Min)
				}
			}
			g := in.Goal.withDefaults()
			past := in.pastVar()
			if !p.Reached {
				if p.Rounds != tc.maxRounds || p.Scale != in.MaxScale() || in.closes(g, past, p.More, p.Requests) >= half {
					t.Errorf("out of reach: want the most requests at the most rounds, the rule not expected to close all: %+v", p)
				}
				return
			}
			if c := in.closes(g, past, p.More, p.Requests); c < half {
				t.Errorf("reached where the rule closes every comparison with a chance of %.2f", c)
			}
			for more := max(g.MinRounds-len(in.Past), 1); len(in.Past)+more <= g.MaxRounds; more++ {
				for k := min(in.ScaleOptimal(), in.MaxScale()); k <= in.MaxScale(); k++ {
					n := in.scaled(k)
					if in.closes(g, past, more, n) >= half && float64(more)*in.RoundSeconds(n) < p.Seconds-1e-6 {
						t.Errorf("%d more rounds at ×%d reach it in %s, the plan takes %s", more, k,
							Duration(float64(more)*in.RoundSeconds(n)), Duration(p.Seconds))
					}
				}
			}
		})
	}
}

// TestAffordScaledIsTheMostPrecise: what a budget buys fits in it, is
// one multiple of every level's minimum, and no pair of rounds and
// multiple that fits is more precise; more time never buys less.
func TestAffordScaledIsTheMostPrecise(t *testing.T) {
	in := threeLevels(0.004, 0.03, 3, 12)
	g := in.Goal.withDefaults()
	past := in.pastVar()
	prev := math.Inf(1)
	for _, h := range []float64{0.5, 1, 2, 4, 8, 16} {
		f := AffordScaled(in, h*3600)
		if !f.Fits {
			t.Fatalf("%gh: nothing fits: %s", h, f)
		}
		if f.Plan.Seconds > h*3600 {
			t.Errorf("%gh: the plan takes %s", h, Duration(f.Plan.Seconds))
		}
		for j, l := range in.Levels {
			if f.Plan.Requests[j] != f.Plan.Scale*l.Min {
				t.Errorf("%gh: %d requests at %s, not %d × %d", h, f.Plan.Requests[j], measure.LevelName(l.Key), f.Plan.Scale, l.Min)
			}
		}
		for more := 1; len(in.Past)+more <= g.MaxRounds; more++ {
			for k := 1; k <= in.MaxScale(); k++ {
				n := in.scaled(k)
				if float64(more)*in.RoundSeconds(n) <= h*3600 && pctOf(in.mde(g, past, more, n)) < f.Plan.MDEPct-1e-9 {
					t.Errorf("%gh: %d more rounds at ×%d fit and bring ±%.2f%%, the plan ±%.2f%%", h, more, k,
						pctOf(in.mde(g, past, more, n)), f.Plan.MDEPct)
				}
			}
		}
		if f.Plan.MDEPct > prev+1e-9 {
			t.Errorf("%gh buys ±%.2f%%, less than less time (±%.2f%%)", h, f.Plan.MDEPct, prev)
		}
		prev = f.Plan.MDEPct
	}
	if f := AffordScaled(in, 60); f.Fits || f.Plan.Scale != 1 {
		t.Errorf("a minute: %+v", f)
	}
}

// TestAtIsWhatRuns: a plan at a given multiple sends that multiple of
// every minimum, costs its rounds at that count, and more rounds bring a
// smaller MDE.
func TestAtIsWhatRuns(t *testing.T) {
	in := threeLevels(0.01, 0.02, 0, 12)
	prev := math.Inf(1)
	for rounds := 2; rounds <= 12; rounds++ {
		p := in.At(rounds, 3)
		if p.Scale != 3 || p.Requests[2] != 3*280 || p.Rounds != rounds {
			t.Fatalf("At(%d, 3): %+v", rounds, p)
		}
		if want := float64(rounds) * in.RoundSeconds(p.Requests); math.Abs(p.Seconds-want) > 1e-9 {
			t.Errorf("At(%d, 3) takes %g s, its rounds %g", rounds, p.Seconds, want)
		}
		if p.MDEPct >= prev {
			t.Errorf("%d rounds: ±%.2f%%, not below %d rounds' ±%.2f%%", rounds, p.MDEPct, rounds-1, prev)
		}
		prev = p.MDEPct
	}
}

// TestScaleOptimal: the multiple is the whole number beside Cochran's k*
// of the noisiest comparison per request whose cost is less, within the
// bounds.
func TestScaleOptimal(t *testing.T) {
	for _, tc := range []struct {
		name               string
		launchSD, withinSD float64
		want               int
	}{
		{"launch noise: the minimum", 0.03, 0.005, 1},
		{"within-launch noise: the most", 0.001, 0.1, DefaultMaxScale},
		{"between", 0.02, 0.04, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := threeLevels(tc.launchSD, tc.withinSD, 0, 12)
			got := in.ScaleOptimal()
			want := tc.want
			if want == 0 {
				var perRound float64
				for _, l := range in.Levels {
					perRound += float64(l.Min) * l.PerRequest
				}
				z := in.Noise[0] // C=1 has the fewest requests: the most within-launch noise per request
				w := z.Within / float64(in.Levels[0].Min)
				k := Cochran(in.Launch, perRound, z.Launch, w)
				cost := func(k float64) float64 { return (z.Launch + w/k) * (in.Launch + k*perRound) }
				want = int(math.Floor(k))
				if cost(math.Ceil(k)) < cost(math.Floor(k)) {
					want = int(math.Ceil(k))
				}
				if k <= 1 || want >= DefaultMaxScale {
					t.Fatalf("k* = %.2f: not between the bounds", k)
				}
				t.Logf("k* = %.2f", k)
			}
			if got != want {
				t.Errorf("ScaleOptimal %d, want %d", got, want)
			}
		})
	}
}
