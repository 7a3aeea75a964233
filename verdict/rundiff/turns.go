package rundiff

import (
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TurnRow is one turn index of one scenario's sessions at one level, in
// both runs of a diff: where a change to the prefix cache or the history
// path shows (turn 1 sends no history; later turns resend it). It is
// descriptive: the medians of the two runs' pooled requests and their
// ratio, not a test, and it takes no part in the regression decision,
// which rests on throughput and capacity.
type TurnRow struct {
	Scenario string        `json:"scenario"`
	Level    measure.Level `json:"level"`
	Turn     int           `json:"turn"`
	// OldTTFT and NewTTFT are the turn's TTFT p50 in each run, seconds.
	OldTTFT float64 `json:"old_ttft_p50_s"`
	NewTTFT float64 `json:"new_ttft_p50_s"`
	// ChangePct is new over old, less 1, in percent.
	ChangePct float64 `json:"change_pct"`
	// OldCached and NewCached are the share of the turn's prompt tokens the
	// server's prefix cache served in each run; nil where it did not say.
	OldCached *float64 `json:"old_cached_share,omitempty"`
	NewCached *float64 `json:"new_cached_share,omitempty"`
}

// diffTurns pairs the per-turn figures of every scenario and level both
// runs measured with sessions, in the old run's order; a level saturated
// in either run is left out, as it is from every comparison.
func diffTurns(vo, vn *verdict.Verdict) []TurnRow {
	var out []TurnRow
	for _, so := range vo.Scenarios {
		sn := vn.Scenario(so.Name)
		if sn == nil {
			continue
		}
		for _, lo := range so.Levels {
			ln := sn.Level(lo.Level)
			if ln == nil || lo.Sessions == nil || ln.Sessions == nil || lo.Saturated || ln.Saturated {
				continue
			}
			for _, to := range lo.Sessions.ByTurn {
				for _, tn := range ln.Sessions.ByTurn {
					if tn.Turn != to.Turn || to.TTFT.P50 <= 0 || tn.TTFT.P50 <= 0 {
						continue
					}
					out = append(out, TurnRow{Scenario: so.Name, Level: lo.Level, Turn: to.Turn,
						OldTTFT: to.TTFT.P50, NewTTFT: tn.TTFT.P50, ChangePct: 100 * (tn.TTFT.P50/to.TTFT.P50 - 1),
						OldCached: to.CachedShare, NewCached: tn.CachedShare})
				}
			}
		}
	}
	return out
}
