package verdict

import (
	"fmt"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"strings"
)

// CheckITL names the note about records that keep no inter-token gaps.
const CheckITL = "itl"

// checkITL says which scenarios have no ITL figures because their records
// keep no gaps (written before they were kept), so that an empty ITL column
// is not read as a server that streamed none. Streams of one chunk have no
// gap to keep and do not count.
func checkITL(v *Verdict, in records.Input) []Note {
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
	return []Note{{Severity: SeverityWarn, Check: CheckITL,
		Text: fmt.Sprintf("no ITL figures for %s: the records keep only each request's largest gap (written before every gap was kept)",
			strings.Join(without, ", "))}}
}
