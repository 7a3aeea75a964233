package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// ChangeShare is the relative change of a figure below which Change does
// not name it: a tenth, less than one round's noise moves a launch's time
// or a noise estimate from one look to the next.
const ChangeShare = 0.1

// Change says what moved the plan is (made from the inputs now) away from
// the plan was (made from the inputs then): the figures that changed by
// ChangeShare or more (the noise at the level whose comparison now sets
// the plan, a launch's time, the launches a round), then what that did to
// the rounds, e.g. "noise at C=70 higher than assumed (3.1% a round, not
// 2.0%): 9 rounds in all, not 7". noiseWas and costWas name where then's
// noise and costs came from, as the sentence compares with them
// ("assumed", "the host's profile", "planned", "at the last look").
func Change(then, now Inputs, was, is Plan, noiseWas, costWas string) string {
	var why []string
	if s := noiseChange(then, now, noiseWas); s != "" {
		why = append(why, s)
	}
	if a, b := then.launchSeconds(), now.launchSeconds(); moved(a, b) {
		word := "longer"
		if b < a {
			word = "shorter"
		}
		why = append(why, fmt.Sprintf("a launch %s than %s (%s, not %s)", word, costWas, Duration(b), Duration(a)))
	}
	if now.Scenarios != then.Scenarios && now.Scenarios > 0 && then.Scenarios > 0 {
		why = append(why, fmt.Sprintf("%s a round, not %d", plural(now.Scenarios, "launch"), then.Scenarios))
	}
	effect := roundsChange(was, is)
	if len(why) == 0 {
		return "nothing measured moved by a tenth or more: " + effect
	}
	return strings.Join(why, "; ") + ": " + effect
}

// roundsChange is what a change did to the rounds in all and the
// requests: "9 rounds in all, not 7", "the same 7 rounds in all".
func roundsChange(was, is Plan) string {
	s := fmt.Sprintf("%d rounds in all, not %d", is.Rounds, was.Rounds)
	if is.Rounds == was.Rounds {
		s = fmt.Sprintf("the same %d rounds in all", is.Rounds)
	}
	if is.Scale != was.Scale && is.Scale > 0 && was.Scale > 0 {
		s += fmt.Sprintf(", the auto count ×%d, not ×%d", is.Scale, was.Scale)
	}
	_, wasOK := MDEFigure(was.MDEPct)
	_, isOK := MDEFigure(is.MDEPct)
	switch {
	case !isOK:
		s += ", the MDE cannot be estimated now"
	case !wasOK:
	case was.Reached && !is.Reached:
		s += fmt.Sprintf(", ±%s%% now out of reach", fmtPct(is.MarginPct))
	case !was.Reached && is.Reached:
		s += fmt.Sprintf(", ±%s%% now within reach", fmtPct(is.MarginPct))
	}
	return s
}

// noiseChange names the change of one round's noise at the level whose
// comparison has the most of it now (the one that sets the plan), at the
// level's minimum requests: "noise at C=70 higher than assumed (3.1% a
// round, not 2.0%)"; "" when it moved less than ChangeShare or one side
// has no figure for the level.
func noiseChange(then, now Inputs, thenWas string) string {
	key, sd, ok := now.noisiest()
	if !ok {
		return ""
	}
	before, ok := then.noiseAt(key)
	if !ok || !moved(before, sd) {
		return ""
	}
	word := "higher"
	if sd < before {
		word = "lower"
	}
	return fmt.Sprintf("noise at %s %s than %s (%.1f%% a round, not %.1f%%)", measure.LevelName(key), word, thenWas,
		pctOf(sd), pctOf(before))
}

// noisiest is the level whose open comparison has the largest standard
// deviation of one round's log ratio at the level's minimum requests, and
// that deviation.
func (in Inputs) noisiest() (key measure.Level, sd float64, ok bool) {
	lo, _ := in.bounds()
	for _, z := range in.Noise {
		if v := math.Sqrt(z.Var(lo[z.Level])); v > sd {
			key, sd, ok = in.Levels[z.Level].Key, v, true
		}
	}
	return key, sd, ok
}

// noiseAt is the largest standard deviation of one round's log ratio at
// level key, at its minimum requests.
func (in Inputs) noiseAt(key measure.Level) (sd float64, ok bool) {
	lo, _ := in.bounds()
	for _, z := range in.Noise {
		if in.Levels[z.Level].Key != key {
			continue
		}
		if v := math.Sqrt(z.Var(lo[z.Level])); v > 0 {
			sd, ok = max(sd, v), true
		}
	}
	return sd, ok
}

// launchSeconds is one launch at every level's minimum requests, s.
func (in Inputs) launchSeconds() float64 {
	lo, _ := in.bounds()
	t := in.Launch
	for j, l := range in.Levels {
		t += float64(lo[j]) * l.PerRequest
	}
	return t
}

// moved reports whether b differs from a by ChangeShare of a or more.
func moved(a, b float64) bool {
	return a > 0 && b > 0 && math.Abs(b-a) >= ChangeShare*a
}
