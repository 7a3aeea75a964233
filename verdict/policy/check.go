package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// LevelCheck is how the configuration named ScenarioName stood at one
// level of a race against fixed configurations.
type LevelCheck struct {
	Level string `json:"level"`
	// Outcome is "best" (selected); "within" (not shown to be more than the
	// race's delta behind the best: live within delta of the selected, or
	// ruled out less than delta behind the leader, a difference the race
	// counts as none); "short" (ruled out at least delta behind the leader:
	// the leader was ahead by more than the noise allows, and by more than
	// the race counts as equal); or "open" (live, more than delta behind
	// the selected by the means: the race was cut off).
	Outcome string `json:"outcome"`
	// Best is the level's selected configuration, or the one that ruled the
	// policy out.
	Best string `json:"best,omitempty"`
	// GapPct is how far Best led the policy (Best over it, less one,
	// percent), by the means over the rounds until it was ruled out.
	GapPct float64 `json:"gap_pct,omitempty"`
	// Round is the round after which it was ruled out; 0 when it was not.
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
	// DeltaPct is the race's indifference zone, percent.
	DeltaPct float64      `json:"delta_pct"`
	Levels   []LevelCheck `json:"levels"`
	// Delivers is set when the policy is the best or within delta of it at
	// every level.
	Delivers bool `json:"delivers"`
}

// Check reads the race for the configuration named ScenarioName; nil when
// the race has none.
func Check(res *selection.Result) *Checked {
	if res == nil || !slices.Contains(raced(res), ScenarioName) {
		return nil
	}
	out := &Checked{DeltaPct: 100 * res.Options.Delta, Delivers: true}
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
			// Withdrawn (its launch failed) is not settled either way.
			lc.Outcome = "open"
			for _, e := range res.Eliminations {
				if e.Config == ScenarioName && e.Level == l.Level && !e.Withdrawn {
					lc.Best, lc.GapPct, lc.Round = e.By, e.GapPct, e.Round
					lc.Outcome = "short"
					if e.GapPct < out.DeltaPct {
						lc.Outcome = "within"
					}
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
// the fixed configurations at every level: …" or where it falls short.
func (c *Checked) Sentence() string {
	zone := fmt.Sprintf("±%s%%", strconv.FormatFloat(c.DeltaPct, 'f', -1, 64))
	if c.Delivers {
		return "The policy delivers the best of the fixed configurations at every level: the best or within the race's " + zone + " of it."
	}
	var short, open, good []string
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
		default:
			good = append(good, l.Level)
		}
	}
	var parts []string
	if len(short) > 0 {
		parts = append(parts, "falls short at "+strings.Join(short, ", "))
	}
	if len(open) > 0 {
		parts = append(parts, "is not settled at "+strings.Join(open, ", "))
	}
	if len(good) > 0 {
		parts = append(parts, "is the best or within "+zone+" of it at "+strings.Join(good, ", "))
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
