package notes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// checkFigures says, per scenario served by a deployment whose engine
// figures were read from another role than the one the load went to, where
// they came from: the accept length, the server's counts and timeline are
// that role's instance 0 (a decode worker behind SGLang's router, which
// serves none of them). A reader comparing them with a single server's
// must know they are one worker's, not the deployment's whole.
func checkFigures(v *verdict.Verdict, in records.Input) []verdict.Note {
	var notes []verdict.Note
	for _, s := range v.Scenarios {
		var roles []string
		for _, ln := range in.Launches[s.Name] {
			if r := ln.Result; r != nil && r.FiguresFrom != "" && !slices.Contains(roles, r.FiguresFrom) {
				roles = append(roles, r.FiguresFrom)
			}
		}
		if len(roles) == 0 {
			continue
		}
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckFigures, Scenario: s.Name,
			Text: fmt.Sprintf("%s: the engine's own figures (accept length, server counts and timeline) are those of role %s, read beside the load (roles/%s/); the role the load went to serves none",
				s.Name, strings.Join(roles, " and "), roles[0])})
	}
	return notes
}
