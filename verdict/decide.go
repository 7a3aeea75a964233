package verdict

import (
	"math"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// Outcomes of one comparison (a variant against the baseline at one level,
// or a scenario in two runs), as the table, the crossover sentence and diff
// show them.
const (
	// OutcomeFaster and OutcomeSlower: the corrected test is significant
	// (and, with one launch per side, the difference reaches the minimum
	// effect), and the interval is not wholly inside the equivalence margin.
	OutcomeFaster = "faster"
	OutcomeSlower = "slower"
	// OutcomeTie: the (1−2α) interval of the ratio lies inside
	// ±equivalence margin (two one-sided tests); never with one launch a
	// side.
	OutcomeTie = "tie"
	// OutcomeInconclusive: neither; the data cannot tell. MDEPct says how
	// large a difference the run could have detected.
	OutcomeInconclusive = "inconclusive"
)

// Methods of estimating a comparison's error.
const (
	// MethodLaunches: one figure per launch and level, paired by round (or,
	// between two runs, unpaired), with the launch-to-launch variance pooled
	// over the levels (rule.PooledVar).
	MethodLaunches = "launches"
	// MethodWithinLaunch: one launch per side; the error comes from the
	// within-launch throughput samples alone, and launch-to-launch variation
	// is not measured.
	MethodWithinLaunch = "within-launch"
)

// Defaults of the decision rule, the campaign keys' defaults (one fact, one
// place: package campaign); docs/METHOD.md gives the measurements behind
// each.
const (
	// DefaultRounds is the launches per scenario a campaign makes: the
	// fewest that meet the honesty figures under 1% launch noise and drift.
	DefaultRounds = campaign.DefaultRounds
	// DefaultMinEffectPct is the smallest difference, percent, named a win
	// or loss when launch-to-launch variation is not measured (one launch
	// per side): campaign key min_effect.
	DefaultMinEffectPct = campaign.DefaultMinEffectPct
	// DefaultEquivalenceMarginPct is the ± margin, percent, inside which a
	// difference is a tie: campaign key equivalence_margin.
	DefaultEquivalenceMarginPct = campaign.DefaultEquivalenceMarginPct
	// DefaultPower is the power at which the minimum detectable effect of an
	// inconclusive comparison is stated.
	DefaultPower = 0.8
)

// Comparison is one figure against another at one level: a variant against
// the baseline, one scenario against another for the row's winner, or a
// scenario's new run against its old one.
type Comparison struct {
	// Method says where the error estimate comes from: MethodLaunches or
	// MethodWithinLaunch.
	Method string `json:"method,omitempty"`
	// Rounds is the launches per side behind the comparison: the rounds
	// both were measured in (paired), or the smaller side's count.
	Rounds int `json:"rounds,omitempty"`
	// DeltaPct is the estimated difference, percent: 100·(Speedup − 1).
	DeltaPct float64 `json:"delta_pct"`
	// Speedup is the estimated throughput ratio; SpeedupLo and SpeedupHi
	// its confidence interval (Verdict.Confidence, not corrected for the
	// number of comparisons).
	Speedup   float64 `json:"speedup"`
	SpeedupLo float64 `json:"speedup_lo"`
	SpeedupHi float64 `json:"speedup_hi"`
	// OutcomeLo and OutcomeHi are the interval of the ratio the outcome was
	// decided on, at OutcomeConfidence: a win's or loss's at the corrected
	// level (1 − alpha·P/PAdjusted, the level its test was passed at, so it
	// excludes no difference), a tie's or an inconclusive comparison's the
	// (1 − 2α) interval of the two one-sided tests (inside ±equivalence
	// margin exactly for a tie). Under a sequential plan both are repeated
	// intervals at the look that closed it. Zero without an error estimate.
	OutcomeLo         float64 `json:"outcome_lo,omitempty"`
	OutcomeHi         float64 `json:"outcome_hi,omitempty"`
	OutcomeConfidence float64 `json:"outcome_confidence,omitempty"`
	// DF is the t-test's degrees of freedom: with a host's noise profile,
	// the pooled estimate's, the loan's included, even where a sequential
	// look judged a test on tonight's rounds alone (loan.go); the planner
	// takes tonight's df per round from it less the loan (plan/observe.go).
	DF float64 `json:"df"`
	// P is the two-sided p-value of no difference; PAdjusted is P corrected
	// for every comparison of the family (Verdict.Correction).
	P         float64 `json:"p"`
	PAdjusted float64 `json:"p_adjusted"`
	// Significant is PAdjusted < alpha.
	Significant bool `json:"significant"`
	// Outcome is OutcomeFaster, OutcomeSlower, OutcomeTie,
	// OutcomeInconclusive or OutcomeDoubted.
	Outcome string `json:"outcome"`
	// Doubts are why the comparison was not decided (OutcomeDoubted): each
	// side's doubts at the level.
	Doubts []Doubt `json:"doubts,omitempty"`
	// MDEPct is the smallest difference, percent, this comparison would have
	// detected with DefaultPower at the family's most stringent threshold
	// (alpha over the number of comparisons); 0 when it has no error
	// estimate and can detect none.
	MDEPct float64 `json:"mde_pct,omitempty"`
	// RoundSDPct is the estimated standard deviation, percent, of one
	// round's difference (MethodLaunches), or of one within-launch
	// sample's (MethodWithinLaunch).
	RoundSDPct float64 `json:"round_sd_pct,omitempty"`
	// BelowMinEffect is set when the corrected test is significant but,
	// launch-to-launch variation being unmeasured, the difference is under
	// the minimum effect.
	BelowMinEffect bool `json:"below_min_effect,omitempty"`
	// Hopeless is true when no data could make this comparison significant
	// (fewer than two samples or launches a side).
	Hopeless bool `json:"hopeless,omitempty"`
	// NoisyLevel is set when this level varied between rounds more than the
	// pooled variance allows (rule.LevelVar): its own variance and df are used.
	NoisyLevel bool `json:"noisy_level,omitempty"`
	// WithinShare is the part of one round's variance that the launches'
	// within-launch samples account for (MethodLaunches), 0 to 1: high
	// means more requests per level would help, low that only more rounds
	// will.
	WithinShare float64 `json:"within_share,omitempty"`
	// Decided is set, under a sequential plan, when a look closed the
	// comparison as faster, slower or tie; DecidedAtRound is the round after
	// which that look was taken. Its interval is then the repeated
	// confidence interval at that look, and P the repeated p-value.
	Decided        bool `json:"decided,omitempty"`
	DecidedAtRound int  `json:"decided_at_round,omitempty"`
	// Open is set, under a sequential plan, while the comparison is
	// undecided and can still get rounds (its Outcome is then
	// inconclusive, for now).
	Open bool `json:"open,omitempty"`

	est rule.Diff
	// own is est on tonight's rounds alone, where a host's noise profile
	// lent est its df (prior.go); zero without a loan. The sequential rule
	// takes, for each test and interval, whichever of the two the loan
	// narrows by its df alone (judged).
	own rule.Diff
	// serial is the factor by which the variance of the mean over rounds
	// exceeds the round variance over the rounds, estimated from the
	// correlation of consecutive rounds (rule.SerialInflation); 0 or 1: none.
	// Only the sequential rule applies it (sequential.go says why).
	serial float64
}

// fixedRule is the decision rule applied to one family of comparisons.
type fixedRule struct {
	Alpha, Confidence    float64
	Correction           string
	MinEffectPct         float64
	EquivalenceMarginPct float64
}

// newComparison fills a comparison's estimate, interval and raw p-value.
func newComparison(e rule.Diff, method string, rounds int, sd float64, conf float64) Comparison {
	c := Comparison{Method: method, Rounds: rounds, est: e, DF: e.DF,
		Speedup: math.Exp(e.D), DeltaPct: pctOf(e.D), P: e.P(), Hopeless: !e.OK()}
	c.SpeedupLo, c.SpeedupHi = c.Speedup, c.Speedup // no interval without an error estimate
	if e.OK() {
		lo, hi := e.Interval(conf)
		c.SpeedupLo, c.SpeedupHi = math.Exp(lo), math.Exp(hi)
	}
	if !math.IsNaN(sd) {
		c.RoundSDPct = pctOf(sd)
	}
	return c
}

// decide corrects the family's p-values and gives every comparison its
// outcome. The family is every comparison in cs.
func decide(cs []*Comparison, r fixedRule) {
	p := make([]float64, len(cs))
	for i, c := range cs {
		p[i] = c.P
	}
	adj := rule.Adjust(p, r.Correction)
	m := max(len(cs), 1)
	margin := r.EquivalenceMarginPct / 100
	lo, hi := math.Log1p(-margin), math.Log1p(margin)
	for i, c := range cs {
		c.PAdjusted = adj[i]
		c.Significant = c.PAdjusted < r.Alpha
		c.MDEPct = 0
		if c.est.OK() {
			c.MDEPct = pctOf(c.est.MDE(r.Alpha/float64(m), DefaultPower))
			if c.Method == MethodWithinLaunch {
				// Nothing under the minimum effect is ever named a win.
				c.MDEPct = math.Max(c.MDEPct, r.MinEffectPct)
			}
		}
		switch {
		case margin > 0 && c.Method != MethodWithinLaunch && c.est.Equivalent(lo, hi, r.Alpha):
			// One launch a side cannot show equivalence: the launch-to-launch
			// difference it did not measure (±1.4% sd in the sim's model)
			// is as large as the margin.
			c.Outcome = OutcomeTie
		case c.Significant && c.Method == MethodWithinLaunch && math.Abs(c.DeltaPct) < r.MinEffectPct:
			c.Outcome = OutcomeInconclusive
			c.BelowMinEffect = true
		case c.Significant && c.DeltaPct > 0:
			c.Outcome = OutcomeFaster
		case c.Significant && c.DeltaPct < 0:
			c.Outcome = OutcomeSlower
		default:
			c.Outcome = OutcomeInconclusive
		}
		c.OutcomeLo, c.OutcomeHi, c.OutcomeConfidence = 0, 0, 0
		if c.est.OK() {
			level := 2 * r.Alpha
			if c.Outcome == OutcomeFaster || c.Outcome == OutcomeSlower {
				level = r.Alpha / float64(m)
				if c.PAdjusted > 0 && c.P > 0 {
					level = r.Alpha * c.P / c.PAdjusted
				}
			}
			lo, hi := c.est.Interval(1 - level)
			c.OutcomeLo, c.OutcomeHi, c.OutcomeConfidence = math.Exp(lo), math.Exp(hi), 1-level
		}
	}
}

// Sign is +1 for OutcomeFaster, −1 for OutcomeSlower, 0 otherwise.
func (c Comparison) Sign() int {
	switch c.Outcome {
	case OutcomeFaster:
		return 1
	case OutcomeSlower:
		return -1
	}
	return 0
}

// CompareRuns compares one scenario measured in two runs, level by level:
// new against old. Launches are not paired (the rounds of two runs have
// nothing in common); each run's launch-to-launch variance is pooled over
// its levels, and with one launch on each side the within-launch samples
// stand in (MethodWithinLaunch). The comparisons are undecided until Decide.
func CompareRuns(old, new *Scenario, confidence float64) map[measure.Level]*Comparison {
	cs, _ := compareLevels(old.Levels, new.Levels, false, confidence, nil)
	return cs
}

// Decide corrects the p-values of one family of comparisons for their
// number and gives each its outcome, as the verdict does for its own.
func Decide(cs []*Comparison, alpha float64, correction string, minEffectPct, equivalenceMarginPct float64) {
	decide(cs, fixedRule{Alpha: alpha, Correction: correction, MinEffectPct: minEffectPct,
		EquivalenceMarginPct: equivalenceMarginPct})
}

// WithRunEffect widens c, one scenario compared across two runs
// (CompareRuns), by a run effect: whatever is common to one run's launches
// and varies from run to run (the host's load and clocks, its thermal
// state, the page cache, a driver's mood), which within-run launches
// cannot see. Each run carries its own draw, so the difference of two runs'
// means carries twice its variance: SE² becomes SE² + 2·runVar, with the
// Welch–Satterthwaite df of the two parts, runDF being the df of runVar's
// estimate. c's interval and p are recomputed; its outcome is left for
// Decide.
func WithRunEffect(c *Comparison, runVar, runDF, conf float64) {
	e := c.est
	if !e.OK() || runVar < 0 || runDF <= 0 {
		return
	}
	within, between := e.SE*e.SE, 2*runVar
	e.SE = math.Sqrt(within + between)
	e.DF = satterthwaite([]float64{within, between}, []float64{c.est.DF, runDF})
	n := newComparison(e, c.Method, c.Rounds, math.NaN(), conf)
	n.RoundSDPct, n.NoisyLevel, n.WithinShare = c.RoundSDPct, c.NoisyLevel, c.WithinShare
	*c = n
}

// RatioChange is the change between two runs of one variant's paired ratio
// to the baseline (each run's ComparePaired at one level): new's log ratio
// less old's, with the two runs' standard errors combined and the
// Welch–Satterthwaite df. What is common to one run's launches multiplies
// the variant and the baseline alike and cancels in each run's ratio, so
// this change carries no run effect. Undecided until Decide; nil when
// either side has no error estimate.
func RatioChange(old, new *Comparison, conf float64) *Comparison {
	// Each run's ratio with its rounds' serial correlation taken in, as
	// the sequential rule takes it (sequentialView): under a wandering
	// load consecutive rounds of one run lean alike, and the plain paired
	// error would be too small by that much in both runs at once.
	old, new = sequentialView(old), sequentialView(new)
	if !old.est.OK() || !new.est.OK() {
		return nil
	}
	vo, vn := old.est.SE*old.est.SE, new.est.SE*new.est.SE
	e := rule.Diff{D: new.est.D - old.est.D, SE: math.Sqrt(vo + vn),
		DF: satterthwaite([]float64{vo, vn}, []float64{old.est.DF, new.est.DF})}
	method := MethodLaunches
	if old.Method == MethodWithinLaunch || new.Method == MethodWithinLaunch {
		// One launch a side in either run: the ratio's error is the
		// within-launch samples', and Decide then names no tie and
		// nothing under the minimum effect.
		method = MethodWithinLaunch
	}
	return plainComparison(e, method, min(old.Rounds, new.Rounds), conf)
}

// plainComparison is newComparison without a round spread.
func plainComparison(e rule.Diff, method string, rounds int, conf float64) *Comparison {
	c := newComparison(e, method, rounds, math.NaN(), conf)
	return &c
}

// ComparePaired is every level's paired comparison of variant against base
// over all the rounds both launched in, as the fixed design makes it (no
// sequential look, no prior): what a run says of the variant's ratio to
// the baseline, for RatioChange.
func ComparePaired(base, variant *Scenario, conf float64) map[measure.Level]*Comparison {
	cs, _ := compareLevels(base.Levels, variant.Levels, true, conf, nil)
	return cs
}

// satterthwaite is the Welch–Satterthwaite df of a sum of variance parts,
// each with its own df: (Σv)² / Σ(v²/df). A part with no df (or no
// variance) adds nothing to the denominator.
func satterthwaite(v, df []float64) float64 {
	var sum, den float64
	for i := range v {
		sum += v[i]
		if df[i] > 0 && v[i] > 0 {
			den += v[i] * v[i] / df[i]
		}
	}
	if den == 0 {
		return math.Max(df[0], 0)
	}
	return sum * sum / den
}
