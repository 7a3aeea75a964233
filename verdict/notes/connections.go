package notes

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// checkConnections names each scenario whose server closed kept-alive
// connections that requests went out on: the load generator sent those
// requests once more on a new connection (measure.Record.ConnRetries), so
// they are results, not failures; the note says it happened, and that a
// retried request's send time is its second send. A server that closed
// none gets no note: this is a fact about a server, not a check that can
// fail.
func checkConnections(v *verdict.Verdict, in records.Input) []verdict.Note {
	var notes []verdict.Note
	for _, s := range v.Scenarios {
		retried, total := 0, 0
		for _, r := range in.Records(s.Name) {
			total++
			if r.ConnRetries > 0 {
				retried++
			}
		}
		if retried == 0 {
			continue
		}
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckConnections, Scenario: s.Name,
			Text: fmt.Sprintf("%s: the server closes its kept-alive connections (after each answer, as llama.cpp's llama-server does, or when idle): "+
				"%d of %d requests found theirs closed before any answer and were sent once more on a new connection (docs/LOADGEN.md)",
				s.Name, retried, total)})
	}
	return notes
}
