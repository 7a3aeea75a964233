package plan

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// Plan is how the next rounds should run.
type Plan struct {
	// Levels are the level keys, Requests the measured requests each takes
	// in every scenario of every further round.
	Levels   []measure.Level
	Requests []int
	// More is the further rounds expected; Rounds is the rounds in all.
	More, Rounds int
	// MDEPct is the detectable difference expected after them, percent
	// (the worst open comparison's).
	MDEPct float64
	// Seconds is the expected wall time of the further rounds;
	// RoundSeconds that of one of them (for RoundFits).
	Seconds, RoundSeconds float64
	// Reached is set when the sequential rule is expected to have closed
	// every open comparison by the end of the plan's rounds (more likely
	// than not: Inputs.Stops); false when no plan within the bounds does:
	// then the plan is the most precise one at the most rounds allowed.
	Reached bool
	// Launches is the further launches the rule is expected to take at
	// the plan's requests: each open variant's until its comparisons with
	// the baseline close, the baseline's until the last (Stops), at most
	// the goal's maximum rounds.
	Launches float64
	// Scale, in a plan made in multiples of every level's minimum
	// (NextScaled, AffordScaled, At), is that multiple: Requests are
	// Scale times each level's minimum. 0 in a plan per level (Next).
	Scale int
	// MarginPct is the goal's margin, for String.
	MarginPct float64
}

// Next is the plan whose rounds the sequential rule is expected to end in
// the least expected wall time: over every number of further rounds the
// goal allows, the fewest requests per level that bring every open
// comparison to the margin (Goal.factor) or, where none does, the most the
// bounds allow, kept when the rule is expected to have closed them all by
// then (closes), and of those the quickest. Requests are per level and the
// same for every scenario of a round, so the rounds stay paired.
func Next(in Inputs) Plan {
	g := in.Goal.withDefaults()
	past := in.pastVar()
	target := logOf(g.MarginPct)
	done := len(in.Past)
	best := Plan{Seconds: math.Inf(1)}
	floor := in.rateOptimal()
	lo, hi := in.bounds()
	for more := max(g.MinRounds-done, 1); done+more <= g.MaxRounds; more++ {
		if float64(more)*in.RoundSeconds(lo) >= best.Seconds {
			break // more rounds, even at the fewest requests, take longer
		}
		n, ok := in.cheapest(g, past, more, target)
		if !ok {
			n = clone(hi)
		}
		for j := range n {
			n[j] = max(n[j], floor[j])
		}
		if in.closes(g, past, more, n) < half {
			continue
		}
		if t := float64(more) * in.RoundSeconds(n); t < best.Seconds {
			best = in.plan(g, past, more, n)
			best.Reached = true
		}
	}
	if !best.Reached {
		best = in.plan(g, past, max(g.MaxRounds-done, 0), hi)
	}
	return in.withStops(best)
}

// withStops is p with the launches the rule is expected to take at its
// requests; a fixed design takes all of its rounds' launches.
func (in Inputs) withStops(p Plan) Plan {
	switch {
	case in.Goal.withDefaults().fixed():
		p.Launches = float64(p.More * max(in.Scenarios, 1))
	case len(p.Requests) == len(in.Levels):
		p.Launches = in.Stops(p.Requests).Launches
	}
	return p
}

// rateOptimal is each level's requests at Cochran's optimum for shared
// rounds (CochranLevels), clamped to its bounds: the count that buys the
// most precision per second of the night. Next never plans fewer. Without
// the floor, a plan that expects the margin within one more round takes
// the fewest requests that just reach it; when the estimate was lucky the
// margin is missed by a little, and the next plan does the same again,
// spending a launch each time for little precision.
func (in Inputs) rateOptimal() []int {
	lo, hi := in.bounds()
	c := make([]float64, len(in.Levels))
	s2 := make([]float64, len(in.Levels))
	for j, l := range in.Levels {
		c[j] = l.PerRequest
	}
	var launch float64
	for _, z := range in.Noise {
		s2[z.Level] = math.Max(s2[z.Level], z.Within)
		launch += z.Launch / float64(len(in.Noise))
	}
	opt := CochranLevels(in.Launch, launch, c, s2)
	n := clone(lo)
	for j, x := range opt {
		if x > float64(lo[j]) {
			n[j] = int(math.Min(math.Ceil(x), float64(hi[j])))
		}
	}
	return n
}

func (in Inputs) plan(g Goal, past []float64, more int, n []int) Plan {
	p := Plan{Requests: n, More: more, Rounds: len(in.Past) + more, MarginPct: g.MarginPct,
		Seconds: float64(more) * in.RoundSeconds(n), RoundSeconds: in.RoundSeconds(n),
		MDEPct: pctOf(in.mde(g, past, more, n))}
	for _, l := range in.Levels {
		p.Levels = append(p.Levels, l.Key)
	}
	return p
}

// Single is the one request count that gives every level at least its
// planned requests, for a load generator that takes one count for all.
func (p Plan) Single() int {
	n := 0
	for _, x := range p.Requests {
		n = max(n, x)
	}
	return n
}

// RequestsAt is the planned requests at level key; 0 when the plan has no
// such level.
func (p Plan) RequestsAt(key measure.Level) int {
	for j, k := range p.Levels {
		if k == key {
			return p.Requests[j]
		}
	}
	return 0
}

// String is the plan in one line, e.g. "plan: 5 more rounds (9 in all)
// of C=1 240, C=4 300 requests, about 3h10m, to bring the MDE to ±2.0%",
// or, when no plan within the bounds reaches the margin, "plan: ±2% is
// out of reach within 8 rounds; the most precise: …".
func (p Plan) String() string {
	if _, ok := MDEFigure(p.MDEPct); !ok {
		return "plan: " + p.Body()
	}
	if !p.Reached {
		return fmt.Sprintf("plan: ±%s%% is out of reach within %d rounds; the most precise: %s",
			fmtPct(p.MarginPct), p.Rounds, p.Body())
	}
	return "plan: " + p.Body()
}

// Body is the plan's rounds, requests, time and expected MDE: "5 more
// rounds (9 in all) of C=1 240, C=4 300 requests, about 3h10m, to bring
// the MDE to ±2.0%".
func (p Plan) Body() string {
	more := plural(p.More, "more round")
	if _, ok := MDEFigure(p.MDEPct); !ok {
		return fmt.Sprintf("%s (%d in all) of %s, about %s; %s",
			more, p.Rounds, p.RequestsText(), Duration(p.Seconds), bringMDE(p.MDEPct))
	}
	return fmt.Sprintf("%s (%d in all) of %s, about %s, to %s",
		more, p.Rounds, p.RequestsText(), Duration(p.Seconds), bringMDE(p.MDEPct))
}

// RequestsText is the plan's requests per level as the rounds send them:
// "C=1 120, C=2 120 requests (the auto count ×4)".
func (p Plan) RequestsText() string {
	var reqs []string
	for j, k := range p.Levels {
		reqs = append(reqs, fmt.Sprintf("%s %d", measure.LevelName(k), p.Requests[j]))
	}
	s := strings.Join(reqs, ", ") + " requests"
	if p.Scale > 1 {
		s += fmt.Sprintf(" (the auto count ×%d)", p.Scale)
	}
	return s
}

// plural is "1 more round" or "3 more rounds", "2 launches"; "more"
// alone does not change.
func plural(n int, what string) string {
	switch {
	case n == 1 || what == "more":
		return fmt.Sprintf("%d %s", n, what)
	case strings.HasSuffix(what, "h"):
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// MDEFigure is an expected MDE, percent, as a plan line writes it:
// "±2.0%", "under ±0.1%" for one that would print as ±0.0%, "over ±100%"
// past 100%. ok is false when it cannot be estimated: zero (no open
// comparison has a noise figure, as when the launches so far did not vary
// at all), infinite or NaN. A plan never promises ±0.0%: no finite number
// of requests measures a difference exactly.
func MDEFigure(pct float64) (text string, ok bool) {
	switch {
	case pct <= 0 || math.IsNaN(pct) || math.IsInf(pct, 0):
		return "", false
	case pct < 0.05:
		return "under ±0.1%", true
	case pct >= 100:
		return "over ±100%", true
	}
	return fmt.Sprintf("±%.1f%%", pct), true
}

// bringMDE is what further rounds do to the MDE: "bring the MDE to
// ±2.0%", or, when it cannot be estimated, says so.
func bringMDE(pct float64) string {
	text, ok := MDEFigure(pct)
	switch {
	case !ok:
		return "the MDE they bring cannot be estimated yet (no launch-to-launch or within-launch noise measured)"
	case strings.HasPrefix(text, "±"):
		return "bring the MDE to " + text
	case strings.HasPrefix(text, "over"):
		return "leave the MDE " + text
	}
	return "bring the MDE " + text
}

// Duration writes seconds as people read a night: 3h10m, 45m, 50s.
func Duration(sec float64) string {
	if math.IsInf(sec, 0) || math.IsNaN(sec) {
		return "forever"
	}
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d >= time.Hour:
		d = d.Round(10 * time.Minute)
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%02dm", h, m)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute).Minutes()))
	default:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	}
}
