package notes

import (
	"fmt"
	"math"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// checkRounds says where the errors come from: launches compared round by
// round, or, with one launch per scenario, within-launch samples alone and
// the launch-to-launch variation unmeasured.
func checkRounds(v *verdict.Verdict) []verdict.Note {
	var notes []verdict.Note
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		if s.Failed() || len(s.Launches) == 0 {
			continue
		}
		// In rounds split over a fleet the baseline's launches are one per
		// part: a replicate counts when every one of them completed.
		got := v.ReplicatesWhere(s, func(l verdict.LaunchInfo) bool { return !l.Failed() && l.Status == "ok" })
		if want := v.RoundsAskedOf(s.Name); want > 1 && got < want {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckRounds, Scenario: s.Name,
				Text: fmt.Sprintf("%s has %d complete launches of the %d rounds asked for; its intervals are wider for it", s.Name, got, want)})
		}
	}
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline || s.Failed() {
			continue
		}
		var within, launches, noisy []string
		var sd float64
		var df float64
		rounds := 0
		pooled := false
		for _, c := range v.Levels {
			cell := v.Cell(c, s.Name)
			if cell == nil || !cell.Compared {
				continue
			}
			switch cell.Method {
			case verdict.MethodWithinLaunch:
				within = append(within, measure.LevelName(c))
			case verdict.MethodLaunches:
				launches = append(launches, measure.LevelName(c))
				rounds = max(rounds, cell.Rounds)
				if cell.NoisyLevel {
					noisy = append(noisy, measure.LevelName(c))
					if !pooled { // the pool's figures, unless every level is judged alone
						sd, df = cell.RoundSDPct, cell.DF
					}
					continue
				}
				sd, df, pooled = cell.RoundSDPct, cell.DF, true
			}
		}
		if len(noisy) > 0 {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckRounds, Scenario: s.Name,
				Text: fmt.Sprintf("%s against %s varied between rounds at %s far more than at its other levels (something disturbed a launch there); those levels are judged on their own variance",
					s.Name, v.Baseline, strings.Join(noisy, ", "))})
		}
		switch {
		case len(within) > 0:
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckRounds, Scenario: s.Name,
				Text: fmt.Sprintf("launch-to-launch variation not measured: %s and %s were launched once each, so the intervals see only the noise within one launch; a winner is named only where the difference is at least %s (min_effect). %s",
					s.Name, v.Baseline, trimPct(v.MinEffectPct), moreRounds(v))})
		case len(launches) > 0:
			same := "in the same round"
			if v.Split() {
				same = "on its host in its part of the same round"
			}
			notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckRounds, Scenario: s.Name,
				Text: fmt.Sprintf("%s against %s: %d rounds, each compared with the baseline launched %s; one round's difference varies by ±%.1f%% (sd, pooled over levels, %.0f df)",
					s.Name, v.Baseline, rounds, same, sd, df)})
		}
	}
	return notes
}

// checkInconclusive says, per variant, where the data could not tell and
// what would: the smallest difference the run could have detected, and how
// many rounds would bring that down to the equivalence margin.
func checkInconclusive(v *verdict.Verdict) []verdict.Note {
	var notes []verdict.Note
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline || s.Failed() {
			continue
		}
		var levels, below []string
		var worst, share float64
		var method string
		rounds, k := 0, 0
		for _, c := range v.Levels {
			cell := v.Cell(c, s.Name)
			if cell == nil || !cell.Compared || cell.Outcome != verdict.OutcomeInconclusive {
				continue
			}
			if cell.BelowMinEffect {
				below = append(below, fmt.Sprintf("%s (%s)", measure.LevelName(c), verdict.Pct(cell.DeltaPct)))
				continue
			}
			levels = append(levels, measure.LevelName(c))
			mde := cell.MDEPct
			if mde <= 0 {
				mde = math.Inf(1)
			}
			worst = math.Max(worst, mde)
			method, rounds = cell.Method, max(rounds, cell.Rounds)
			share += cell.WithinShare
			k++
		}
		if len(below) > 0 {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckInconclusive, Scenario: s.Name,
				Text: fmt.Sprintf("%s: significant within one launch but under min_effect %s at %s: inconclusive, since the launch-to-launch variation is not measured; rounds: %d would tell",
					s.Name, trimPct(v.MinEffectPct), strings.Join(below, ", "), verdict.DefaultRounds)})
		}
		if len(levels) == 0 {
			continue
		}
		text := fmt.Sprintf("%s vs %s inconclusive at %s: neither a difference nor a tie within ±%s; ",
			s.Name, v.Baseline, strings.Join(levels, ", "), trimPct(v.EquivalenceMarginPct))
		switch {
		case math.IsInf(worst, 1):
			text += "no error estimate (too few samples or launches); more rounds would give one"
		case method == verdict.MethodWithinLaunch:
			text += fmt.Sprintf("this run could detect differences down to %s within one launch; rounds: %d would measure the launch-to-launch variation", verdict.MDEText(worst), verdict.DefaultRounds)
		case worst >= verdict.MaxMDEPct && rounds == 2:
			// One degree of freedom: the corrected t quantile is in the
			// hundreds, and a third round brings it near 10. Scaling the
			// MDE by rounds, as below, would promise hundreds of rounds.
			text += "the smallest detectable difference cannot be estimated from 2 rounds (one degree of freedom): it needs a third round"
		case worst >= verdict.MaxMDEPct:
			text += fmt.Sprintf("this run could detect %s (80%% power)", verdict.MDEText(worst))
		default:
			text += fmt.Sprintf("this run could detect differences down to %s (80%% power)", verdict.MDEText(worst))
			if m := v.EquivalenceMarginPct; m > 0 && rounds > 0 {
				need := int(math.Ceil(float64(rounds) * (worst / m) * (worst / m)))
				if need > 100 {
					text += fmt.Sprintf("; reaching ±%s would take more than 100 rounds", trimPct(m))
				} else if need > rounds {
					text += fmt.Sprintf("; about %d rounds (now %d) would reach ±%s", need, rounds, trimPct(m))
				}
			}
			if k > 0 && share/float64(k) > 0.5 {
				text += "; most of that is noise within a launch, so more requests per level would help as much"
			}
		}
		notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckInconclusive, Scenario: s.Name, Text: text})
	}
	return notes
}

// trimPct is "5%" or "2.5%".
func trimPct(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".") + "%"
}

// moreRounds says what would measure the launch-to-launch variation: the
// rest of the planned rounds when the run was cut short, else more rounds.
func moreRounds(v *verdict.Verdict) string {
	if v.RoundsPlanned > v.RoundsCompleted {
		return fmt.Sprintf("%d of %d planned rounds completed: resume the run to measure it", v.RoundsCompleted, v.RoundsPlanned)
	}
	return fmt.Sprintf("rounds: %d would measure it", verdict.DefaultRounds)
}
