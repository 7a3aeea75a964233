package notes

import (
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// checkHosts reports each host's speed when the run used several, and the
// rounds left out of a comparison because its two launches ran on different
// hosts.
func checkHosts(v *verdict.Verdict) []verdict.Note {
	var notes []verdict.Note
	for _, m := range v.MixedHosts {
		text := fmt.Sprintf("%s and %s ran on different hosts in %s: left out of their comparison, since one host's speed would count as a difference between them",
			m.B, m.A, roundList(m.Rounds))
		if m.Left == 0 {
			text += "; no round is left to compare them"
		} else {
			text += fmt.Sprintf("; %s left", verdict.Plural(m.Left, "round", "rounds"))
		}
		notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckHosts, Scenario: m.B, Text: text})
	}
	if len(v.Hosts) > 0 {
		parts := make([]string, len(v.Hosts))
		for i, h := range v.Hosts {
			parts[i] = fmt.Sprintf("%s %s (%s)", h.Host, verdict.Pct(h.RelativePct), roundList(h.Rounds))
		}
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckHosts,
			Text: fmt.Sprintf("hosts: the baseline's throughput on each against the fleet's mean (geometric mean over levels): %s; each comparison pairs the launches of one round, which ran on one host, so a host's speed does not count as a difference",
				strings.Join(parts, ", "))})
	}
	return notes
}

// roundList is "round 2" or "rounds 1, 3, 5".
func roundList(rs []int) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	if len(rs) == 1 {
		return "round " + s[0]
	}
	return "rounds " + strings.Join(s, ", ")
}
