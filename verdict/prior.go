package verdict

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// A host's noise profile (package noise) as a prior on tonight's
// launch-to-launch variance. At a campaign's first looks the variance rests
// on two or three rounds, and its few degrees of freedom, not the noise
// itself, keep the intervals wide: a t quantile at 2 df is twice the one at
// 12. What earlier campaigns on the same host, engine and model measured
// can lend those df, but only while tonight's noise is the same: a prior
// that is too small narrows every interval and raises every error rate. So
// it is used only under three guards, chosen together on the simulation
// of verdict/prior_test.go (docs/METHOD.md, "A host's noise profile"):
//   - an agreement test at every look: tonight's variance against the
//     prior's, one-sided (a noisier night is the danger; a quieter one only
//     costs power) at PriorAgreeAlpha; when it fails, tonight's estimate
//     stands alone, and the notes say so;
//   - slack: the prior's variance is taken PriorSlack times larger. At two
//     or three rounds no test can tell a night twice as noisy from an
//     ordinary one, so the prior must be safe even then; what it still
//     lends is its df, which is where the first looks' width comes from
//     (t at 2 df is 4.30; at 14, 2.14: twice the variance and the narrower
//     quantile still make an interval a third narrower);
//   - a cap: the prior lends at most PriorMaxDF degrees of freedom however
//     many runs it pools, so that tonight's own data always count.
//
// A grid of the three (agreement at 10–35%, slack 1.5–2.5, cap 6–12) kept
// a comparison's size and false-tie rate at or below 5% up to a night
// twice as noisy only with slack 2 or more; 2 with a cap of 12 and a test
// at 10% calls 14 points more true ties at the third round than tonight
// alone, and slack 2.5 calls none more.
const (
	PriorSlack      = 2.0
	PriorMaxDF      = 12.0
	PriorAgreeAlpha = 0.1
)

// NoisePrior is the prior a run started with: a host's pooled round
// variance from its noise profile.
type NoisePrior struct {
	// Var is the variance of one round's paired log difference, (log
	// units)²; DF its degrees of freedom over the runs it came from.
	Var float64 `json:"round_var"`
	DF  float64 `json:"df"`
	// Source names the profile ("gpu-01, sglang, Kimi-K2.5") and Runs the
	// runs it pooled.
	Source string   `json:"source"`
	Runs   []string `json:"runs,omitempty"`
}

// PriorUse is how the prior served one comparison at its last look.
type PriorUse struct {
	// Agreed is set when tonight's variance agreed with the prior's and
	// the two were pooled.
	Agreed bool `json:"agreed"`
	// Ratio is tonight's variance over the prior's (before slack); F the
	// agreement test's bound it was held to.
	Ratio float64 `json:"ratio"`
	Bound float64 `json:"bound"`
}

// combine pools tonight's launch variance lv with the prior when they
// agree (the guards above), and says how it went. Without tonight's own
// estimate (fewer than two rounds) nothing is pooled: agreement cannot be
// tested.
func (p *NoisePrior) combine(lv rule.Var) (rule.Var, *PriorUse) {
	df0 := p.LentDF()
	if df0 <= 0 || lv.DF <= 0 {
		return lv, nil
	}
	prior := p.LentVar()
	bound := distuv.F{D1: lv.DF, D2: df0}.Quantile(1 - PriorAgreeAlpha)
	use := &PriorUse{Ratio: lv.Var / p.Var, Bound: bound * PriorSlack}
	if lv.Var/prior > bound {
		return lv, use
	}
	use.Agreed = true
	return rule.Var{Var: (lv.DF*lv.Var + df0*prior) / (lv.DF + df0), DF: lv.DF + df0}, use
}

// noteNoise keeps what one pair of scenarios measured of the noise on all
// of tonight's rounds: how the prior served it, and, for a variant against
// the baseline, its own launch variance for the host's profile.
func (v *Verdict) noteNoise(a, b string, own *ownNoise) {
	if own.prior != nil {
		v.priorUses = append(v.priorUses, own.prior)
	}
	if a != v.Baseline && b != v.Baseline {
		return
	}
	if v.Noise == nil {
		v.Noise = &RunNoise{}
	}
	n := v.Noise
	n.ss += own.pooled.Var * own.pooled.DF
	n.DF += own.pooled.DF
	n.Var = n.ss / n.DF
	for _, c := range v.Levels {
		lv, ok := own.levels[c]
		if !ok {
			continue
		}
		i := -1
		for j := range n.Levels {
			if n.Levels[j].Level == c {
				i = j
			}
		}
		if i < 0 {
			n.Levels = append(n.Levels, LevelNoise{Level: c})
			i = len(n.Levels) - 1
		}
		l := &n.Levels[i]
		l.ss += lv.Var * lv.DF
		l.DF += lv.DF
		l.SDPct = 100 * math.Sqrt(l.ss/l.DF)
	}
}

// RunNoise is the launch-to-launch noise tonight's rounds measured, before
// any prior: the variance of one round's paired log difference about its
// level's mean, pooled over the variants' comparisons with the baseline
// and their levels, with its df, and each level's standard deviation. It
// is what a host's noise profile learns from.
type RunNoise struct {
	Var    float64      `json:"round_var"`
	DF     float64      `json:"df"`
	Levels []LevelNoise `json:"levels,omitempty"`
	ss     float64
}

// LevelNoise is one level's round standard deviation, percent, pooled over
// the variants, with its df.
type LevelNoise struct {
	Level measure.Level `json:"level"`
	SDPct float64       `json:"round_sd_pct"`
	DF    float64       `json:"df"`
	ss    float64
}

// PriorUses is how the host's noise profile served each pair of scenarios
// on all of tonight's rounds, for the note that says so; empty without a
// profile.
func (v *Verdict) PriorUses() []*PriorUse { return v.priorUses }
