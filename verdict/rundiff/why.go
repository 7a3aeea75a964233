package rundiff

import (
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// AcceptRow is one speculative scenario's accept length at one level in
// both runs.
type AcceptRow struct {
	Scenario string        `json:"scenario"`
	Level    measure.Level `json:"level"`
	// Old and New are the runs' accept lengths with their intervals
	// (LevelAccept.Length), OldSource and NewSource where each came from.
	Old       verdict.Estimate `json:"old"`
	New       verdict.Estimate `json:"new"`
	OldSource string           `json:"old_source"`
	NewSource string           `json:"new_source"`
	// DeltaPct is new against old, percent.
	DeltaPct float64 `json:"delta_pct"`
	// P is the two-sided p-value of no change, Welch's t on the logs of
	// the two runs' launches; PAdjusted corrects it by Holm over the diff's
	// accept rows; 1 when either run has a single launch.
	P         float64 `json:"p"`
	PAdjusted float64 `json:"p_adjusted"`
	// Changed is PAdjusted < the diff's alpha: a change the launches'
	// spread does not explain, at a rate of false alarms over the whole
	// table of alpha. It explains, it does not gate: the accept length is
	// not part of the diff's throughput tests.
	Changed bool `json:"changed,omitempty"`
}

// ServerRow is what the server's own metrics said about one scenario at
// one level in both runs, over the steady windows (Level.Server); a figure
// a run lacks is nil.
type ServerRow struct {
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
func diffWhy(d *Result, vo, vn *verdict.Verdict) {
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
	settleAccept(d.Accept, d.Alpha)
}

func acceptDiff(name string, o, n *verdict.LevelAccept, c measure.Level) AcceptRow {
	r := AcceptRow{Scenario: name, Level: c, Old: o.Length, New: n.Length, OldSource: o.Source, NewSource: n.Source, P: 1}
	if o.Length.Center > 0 {
		r.DeltaPct = 100 * (n.Length.Center/o.Length.Center - 1)
	}
	if len(o.Launches) > 1 && len(n.Launches) > 1 {
		r.P = rule.Welch(o.Launches, n.Launches).P()
	}
	return r
}

// settleAccept corrects the accept rows' p-values for their number (Holm)
// and marks the changes at alpha. Each row is a level, and a speculative
// scenario has one at every level: uncorrected, every row would be another
// chance of a false mark, and the table as a whole would cry wolf in many
// diffs between runs of one configuration.
func settleAccept(rows []AcceptRow, alpha float64) {
	p := make([]float64, len(rows))
	for i, r := range rows {
		p[i] = r.P
	}
	for i, adj := range rule.Holm(p) {
		rows[i].PAdjusted = adj
		rows[i].Changed = adj < alpha
	}
}

func serverDiff(name string, o, n *verdict.Level) (ServerRow, bool) {
	r := ServerRow{Scenario: name, Level: o.Level}
	running := func(l *verdict.Level) *float64 {
		if l.Server == nil || l.Server.Running == nil {
			return nil
		}
		return new(l.Server.Running.Mean)
	}
	gen := func(l *verdict.Level) *float64 {
		if l.Server == nil || l.Server.GenTokS == nil {
			return nil
		}
		return new(l.Server.GenTokS.Value)
	}
	r.OldRunning, r.NewRunning, r.OldGenTokS, r.NewGenTokS = running(o), running(n), gen(o), gen(n)
	return r, r.OldRunning != nil || r.NewRunning != nil || r.OldGenTokS != nil || r.NewGenTokS != nil
}
