package notes

import (
	"fmt"
	"math"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// checkServer compares, per scenario and level, the server's generation
// throughput over the steady window with the client's over the same window
// (both from the level summaries, averaged over the same launches), and
// notes every level where they differ by more than
// DefaultServerThroughputTolerance.
func checkServer(v *verdict.Verdict, in records.Input) []verdict.Note {
	var notes []verdict.Note
	levels := 0
	unchecked := map[string]bool{} // why, once each
	var whys []string
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			var server, client float64
			n := 0
			for _, ln := range in.Launches[s.Name] {
				if ln.Result == nil {
					continue
				}
				for _, ls := range ln.Result.Levels {
					if ls.Level != l.Level || ls.Server == nil || ls.Server.GenTokS == nil || ls.Throughput <= 0 {
						continue
					}
					if why := ls.Server.GenTokS.Unchecked; why != "" {
						// A counter whose meaning the engine's profile
						// does not know, or knows to lag: not set
						// beside the client's tokens (the counts doubt
						// skips it too).
						if !unchecked[why] {
							unchecked[why] = true
							whys = append(whys, why)
						}
						continue
					}
					server += ls.Server.GenTokS.Value
					client += ls.Throughput
					n++
				}
			}
			if n == 0 {
				continue
			}
			levels++
			gap := server/client - 1
			if math.Abs(gap) <= verdict.DefaultServerThroughputTolerance {
				continue
			}
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckServer, Scenario: s.Name, Level: l.Level,
				Text: fmt.Sprintf("%s %s: the server generated %.1f tok/s over the steady window by its own counter, the client received %.1f tok/s (%+.1f%%, more than %.0f%% apart): one of the two is not counting what the other is; not decided: %s",
					s.Name, measure.LevelName(l.Level), server/float64(n), client/float64(n), 100*gap, 100*verdict.DefaultServerThroughputTolerance, verdict.DoubtAdvice(verdict.DoubtCounts))})
		}
	}
	for _, why := range whys {
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckServer,
			Text: "the server's generation counter is not set beside the client's tokens: " + why})
	}
	if len(notes) == len(whys) && levels > 0 {
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckServer,
			Text: fmt.Sprintf("the servers' own generation throughput agrees with the client's within %.0f%% at all %d scenario-levels that report it",
				100*verdict.DefaultServerThroughputTolerance, levels)})
	}
	return notes
}
