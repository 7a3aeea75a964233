package notes

import (
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// checkITL says which scenarios have no ITL figures because their records
// keep no gaps (written before they were kept), so that an empty ITL column
// is not read as a server that streamed none. Streams of one chunk have no
// gap to keep and do not count.
func checkITL(v *verdict.Verdict, in records.Input) []verdict.Note {
	var without []string
	for _, s := range v.Scenarios {
		streamed, kept := false, false
		for _, r := range in.Records(s.Name) {
			if r.OK() && !r.Warmup && r.Chunks >= 2 {
				streamed = true
				kept = kept || len(r.ITL) > 0
			}
		}
		if streamed && !kept {
			without = append(without, s.Name)
		}
	}
	if len(without) == 0 {
		return nil
	}
	return []verdict.Note{{Severity: verdict.SeverityWarn, Check: verdict.CheckITL,
		Text: fmt.Sprintf("no ITL figures for %s: the records keep only each request's largest gap (written before every gap was kept)",
			strings.Join(without, ", "))}}
}
