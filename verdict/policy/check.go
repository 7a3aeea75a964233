package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// LevelCheck is how the configuration named ScenarioName stood at one
// level of a race against fixed configurations.
type LevelCheck struct {
	Level string `json:"level"`
	// Outcome is "best" (selected), "within" (live within the race's delta
	// of the selected), "short" (ruled out: the Best was ahead by more than
	// the race allowed) or "open" (live, not within delta by the means).
	Outcome string `json:"outcome"`
	// Best is the level's selected configuration, or for "short" the one
	// that ruled the policy out.
	Best string `json:"best,omitempty"`
	// GapPct is how far the policy was behind Best, by the race's means
	// (the elimination's gap for "short").
	GapPct float64 `json:"gap_pct,omitempty"`
	// Round is the round after which it was ruled out ("short").
	Round int `json:"round,omitempty"`
	// Confirmed is the policy's standing against Best on the confirmation
	// rounds, when both ran there: the selected's lead over the runner-up,
	// signed from the policy's side; nil otherwise.
	Confirmed *selection.Interval `json:"confirmed,omitempty"`
}

// Checked is a race's answer on a policy served as one configuration
// among the fixed ones it switches between: whether it delivers the best
// of them (their envelope) at every level.
type Checked struct {
	Levels []LevelCheck `json:"levels"`
	// Delivers is set when the policy is the best or within delta of it at
	// every level the race decided.
	Delivers bool `json:"delivers"`
}

// Check reads the race for the configuration named ScenarioName; nil when
// the race has none.
func Check(res *selection.Result) *Checked {
	if res == nil || !slices.Contains(raced(res), ScenarioName) {
		return nil
	}
	out := &Checked{Delivers: true}
	for _, l := range res.Levels {
		lc := LevelCheck{Level: l.Level, Best: l.Selected}
		switch {
		case l.Selected == ScenarioName:
			lc.Outcome = "best"
			if a := l.Advantage; a != nil {
				c := *a
				lc.Confirmed = &c
			}
		case !slices.Contains(l.Live, ScenarioName):
			lc.Outcome = "short"
			for _, e := range res.Eliminations {
				if e.Config == ScenarioName && e.Level == l.Level {
					lc.Best, lc.GapPct, lc.Round = e.By, e.GapPct, e.Round
				}
			}
		case slices.Contains(l.Near, ScenarioName):
			lc.Outcome = "within"
		default:
			lc.Outcome = "open"
		}
		if lc.Outcome != "best" && l.RunnerUp == ScenarioName && l.Advantage != nil {
			c := *l.Advantage
			c.Pct, c.LoPct, c.HiPct = -c.Pct, -c.HiPct, -c.LoPct
			lc.Confirmed = &c
		}
		if lc.Outcome == "short" || lc.Outcome == "open" {
			out.Delivers = false
		}
		out.Levels = append(out.Levels, lc)
	}
	return out
}

// Sentence says the check in one line: "The policy delivers the best of
// the fixed configurations at every level." or where it falls short.
func (c *Checked) Sentence() string {
	if c.Delivers {
		return "The policy delivers the best of the fixed configurations at every level: the best or within the race's delta of it."
	}
	var short, open []string
	for _, l := range c.Levels {
		switch l.Outcome {
		case "short":
			s := fmt.Sprintf("%s (%s ahead by %.1f%%, ruled out after round %d", l.Level, l.Best, l.GapPct, l.Round)
			if l.Confirmed != nil {
				s += fmt.Sprintf("; confirmed %+.1f%% [%+.1f, %+.1f]", l.Confirmed.Pct, l.Confirmed.LoPct, l.Confirmed.HiPct)
			}
			short = append(short, s+")")
		case "open":
			open = append(open, l.Level)
		}
	}
	var parts []string
	if len(short) > 0 {
		parts = append(parts, "falls short at "+strings.Join(short, ", "))
	}
	if len(open) > 0 {
		parts = append(parts, "is not settled at "+strings.Join(open, ", "))
	}
	return "The policy " + strings.Join(parts, "; it ") + "."
}

// raced is every configuration of the race.
func raced(res *selection.Result) []string {
	var names []string
	for _, l := range res.Levels {
		names = append(names, l.Live...)
	}
	for _, e := range res.Eliminations {
		names = append(names, e.Config)
	}
	return names
}
