package verdict

import (
	"github.com/bakeoff-dev/bakeoff/measure"
)

// AcceptDiffRow is one speculative scenario's accept length at one level in
// both runs.
type AcceptDiffRow struct {
	Scenario string        `json:"scenario"`
	Level    measure.Level `json:"level"`
	// Old and New are the runs' accept lengths with their intervals
	// (LevelAccept.Length), OldSource and NewSource where each came from.
	Old       Estimate `json:"old"`
	New       Estimate `json:"new"`
	OldSource string   `json:"old_source"`
	NewSource string   `json:"new_source"`
	// DeltaPct is new against old, percent.
	DeltaPct float64 `json:"delta_pct"`
	// Beyond is set when each run's figure lies outside the other's
	// interval: a change the launch-to-launch spread of neither run
	// explains. Never set when either run has a single launch (no
	// interval). It explains, it does not gate: the accept length is not
	// part of the diff's tests.
	Beyond bool `json:"beyond,omitempty"`
}

// ServerDiffRow is what the server's own metrics said about one scenario at
// one level in both runs, over the steady windows (Level.Server); a figure
// a run lacks is nil.
type ServerDiffRow struct {
	Scenario string        `json:"scenario"`
	Level    measure.Level `json:"level"`
	// OldRunning and NewRunning are the mean running batch, requests.
	OldRunning *float64 `json:"old_running,omitempty"`
	NewRunning *float64 `json:"new_running,omitempty"`
	// OldGenTokS and NewGenTokS are the server's generation throughput,
	// tokens per second.
	OldGenTokS *float64 `json:"old_gen_tok_s,omitempty"`
	NewGenTokS *float64 `json:"new_gen_tok_s,omitempty"`
}

// diffWhy fills the diff's accept-length and server rows: every scenario
// and level both runs measured where either has the figure.
func diffWhy(d *DiffResult, vo, vn *Verdict) {
	for _, so := range vo.Scenarios {
		sn := vn.Scenario(so.Name)
		if sn == nil {
			continue
		}
		for i := range so.Levels {
			lo := &so.Levels[i]
			ln := sn.Level(lo.Level)
			if ln == nil {
				continue
			}
			if lo.Accept != nil && ln.Accept != nil {
				d.Accept = append(d.Accept, acceptDiff(so.Name, lo.Accept, ln.Accept, lo.Level))
			}
			if r, ok := serverDiff(so.Name, lo, ln); ok {
				d.Server = append(d.Server, r)
			}
		}
	}
}

func acceptDiff(name string, o, n *LevelAccept, c measure.Level) AcceptDiffRow {
	r := AcceptDiffRow{Scenario: name, Level: c, Old: o.Length, New: n.Length, OldSource: o.Source, NewSource: n.Source}
	if o.Length.Center > 0 {
		r.DeltaPct = 100 * (n.Length.Center/o.Length.Center - 1)
	}
	outside := func(x float64, e Estimate) bool { return x < e.Lo || x > e.Hi }
	r.Beyond = o.Length.N > 1 && n.Length.N > 1 &&
		outside(n.Length.Center, o.Length) && outside(o.Length.Center, n.Length)
	return r
}

func serverDiff(name string, o, n *Level) (ServerDiffRow, bool) {
	r := ServerDiffRow{Scenario: name, Level: o.Level}
	running := func(l *Level) *float64 {
		if l.Server == nil || l.Server.Running == nil {
			return nil
		}
		return new(l.Server.Running.Mean)
	}
	gen := func(l *Level) *float64 {
		if l.Server == nil || l.Server.GenTokS == nil {
			return nil
		}
		return new(l.Server.GenTokS.Value)
	}
	r.OldRunning, r.NewRunning, r.OldGenTokS, r.NewGenTokS = running(o), running(n), gen(o), gen(n)
	return r, r.OldRunning != nil || r.NewRunning != nil || r.OldGenTokS != nil || r.NewGenTokS != nil
}
