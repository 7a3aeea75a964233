package selection

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Result is where the race's looks leave it.
type Result struct {
	// Options are the parameters used, defaults filled.
	Options Options `json:"options"`
	// DF is the degrees of freedom of the first stage's pooled variance,
	// (k−1)(n0−1); H2 is the constant h² they give.
	DF int     `json:"df"`
	H2 float64 `json:"h2"`
	// Rounds is the rounds looked at; Done says the race is over.
	Rounds int  `json:"rounds"`
	Done   bool `json:"done"`
	// Next is the configurations to launch in the next round (none once
	// Done); Confirm, once Done, those to launch in each confirmation round:
	// every level's selected and runner-up, and the best single
	// configuration.
	Next    []string `json:"next,omitempty"`
	Confirm []string `json:"confirm,omitempty"`
	// Launches is each configuration's launches in the race, in campaign
	// order.
	Launches []int `json:"launches"`
	// Levels holds one entry per level, in order.
	Levels []LevelResult `json:"levels"`
	// Eliminations is every configuration ruled out, at which level and
	// when, in the order the looks ruled them out.
	Eliminations []Elimination `json:"eliminations,omitempty"`
	// Looks is the race after each round.
	Looks []Look `json:"looks"`
	// Envelope is how much the best configuration of each load level beats
	// the best single configuration (Options.LoadLevels); nil before the
	// race is over.
	Envelope *Envelope `json:"envelope,omitempty"`
}

// LevelResult is one level's race.
type LevelResult struct {
	Level string `json:"level"`
	// SDPct is the launch-to-launch standard deviation of one configuration
	// at this level behind the last look's allowance, percent (0 before the
	// first stage ends).
	SDPct float64 `json:"sd_pct"`
	// CloseRound is the round by which the allowance, as the last look set
	// it, reaches zero and the level is decided whatever the data: the rounds
	// the guarantee needs.
	CloseRound int `json:"close_round"`
	// DecidedAfter is the round after which the level was decided (one
	// configuration left, or the allowance at zero, or the maximum); 0 while
	// open.
	DecidedAfter int `json:"decided_after,omitempty"`
	// Truncated is set when the maximum cut the level off with more than one
	// configuration live: the live set holds the best with the guaranteed
	// probability, the selection among it is the best mean, unguaranteed.
	Truncated bool `json:"truncated,omitempty"`
	// Live is the configurations not ruled out.
	Live []string `json:"live"`
	// Selected is the live configuration with the best mean (so far, while
	// open); Near those live within Delta of it by their means.
	Selected string   `json:"selected,omitempty"`
	Near     []string `json:"near,omitempty"`
	// RunnerUp is the configuration the selected is measured against: the
	// second-best live one, or with one left, the last ruled out.
	RunnerUp string `json:"runner_up,omitempty"`
	// RaceGapPct is how far the selected led the runner-up in the race, over
	// the rounds until the runner-up was ruled out or the level decided. It
	// is biased upward: each was selected for where it stood.
	RaceGapPct float64 `json:"race_gap_pct"`
	// Advantage is the selected's lead over the runner-up measured on the
	// confirmation rounds alone; nil without them.
	Advantage *Interval `json:"advantage,omitempty"`
}

// Elimination is one configuration ruled out at one level.
type Elimination struct {
	Config string `json:"config"`
	Level  string `json:"level"`
	// Round is the round after which it was ruled out.
	Round int `json:"round"`
	// By is the leader it fell behind, GapPct how far behind (means over
	// rounds 1..Round), AllowancePct how far it could have been and stayed.
	By           string  `json:"by"`
	GapPct       float64 `json:"gap_pct"`
	AllowancePct float64 `json:"allowance_pct"`
	// Withdrawn is set for a configuration taken out of the race
	// (Racer.Withdraw) rather than ruled out: By and the gaps are empty.
	Withdrawn bool `json:"withdrawn,omitempty"`
}

// Look is the race after one round.
type Look struct {
	Round int `json:"round"`
	// Launched is the configurations the round launched.
	Launched []string `json:"launched"`
	// Live holds, per level, the configurations live after the look;
	// AllowancePct the allowance used at it (at a level decided earlier, the
	// allowance it closed with), none before the first stage ends.
	Live         [][]string `json:"live"`
	AllowancePct []float64  `json:"allowance_pct,omitempty"`
}

// Interval is an estimate with its interval at Confidence, percent.
type Interval struct {
	Pct   float64 `json:"pct"`
	LoPct float64 `json:"lo_pct"`
	HiPct float64 `json:"hi_pct"`
	// Rounds is the confirmation rounds it is measured on, DF the degrees of
	// freedom of the variance it uses (the first stage's, independent of the
	// confirmation rounds).
	Rounds int `json:"rounds"`
	DF     int `json:"df"`
}

// Envelope is how much the best configuration of each level beats the best
// single configuration over the load levels: the geometric mean over them of
// the ratio of their throughputs.
type Envelope struct {
	// Single is the configuration with the best geometric mean over levels
	// in the race (each level's mean adjusted for the rounds it ran in).
	Single string `json:"single"`
	// RacePct is the envelope on the race's figures, biased upward as
	// RaceGapPct is.
	RacePct float64 `json:"race_pct"`
	// Confirmed is the envelope on the confirmation rounds; nil without
	// them.
	Confirmed *Interval `json:"confirmed,omitempty"`
}

// Result is the race so far, with the confirmation rounds confirm (run
// after the race ended; ignored before) measuring the advantages and the
// envelope.
func (r *Racer) Result(confirm []Round) (*Result, error) {
	k := len(r.configs)
	res := &Result{
		Options: r.o, DF: r.df, H2: r.h2, Rounds: len(r.rounds), Done: r.done,
		Next: r.Next(), Launches: slices.Clone(r.n),
	}
	for _, e := range r.elims {
		el := Elimination{Config: r.configs[e.config], Level: r.levels[e.level], Round: e.round, Withdrawn: e.by < 0}
		if e.by >= 0 {
			el.By, el.GapPct, el.AllowancePct = r.configs[e.by], pct(e.gap), pct(e.allowance)
		}
		res.Eliminations = append(res.Eliminations, el)
	}
	for _, l := range r.looks {
		lk := Look{Round: l.round, Launched: r.names(l.launched), Live: make([][]string, len(l.live))}
		for c, ids := range l.live {
			lk.Live[c] = r.names(ids)
		}
		if l.round >= r.o.FirstStage {
			for _, w := range l.allow {
				lk.AllowancePct = append(lk.AllowancePct, pct(w))
			}
		}
		res.Looks = append(res.Looks, lk)
	}
	sel, ru := make([]int, len(r.levels)), make([]int, len(r.levels))
	for c := range r.levels {
		var lr LevelResult
		lr, sel[c], ru[c] = r.level(c)
		res.Levels = append(res.Levels, lr)
	}
	if !r.done {
		return res, nil
	}
	single := r.single()
	want := make([]bool, k)
	want[single] = true
	for c := range r.levels {
		want[sel[c]] = true
		if ru[c] >= 0 {
			want[ru[c]] = true
		}
	}
	for i, ok := range want {
		if ok {
			res.Confirm = append(res.Confirm, r.configs[i])
		}
	}
	conf, err := r.confirmRounds(confirm, want)
	if err != nil {
		return nil, err
	}
	for c := range r.levels {
		if ru[c] >= 0 {
			res.Levels[c].Advantage = r.advantage(conf, c, sel[c], ru[c])
		}
	}
	res.Envelope = r.envelope(conf, sel, single)
	return res, nil
}

func (r *Racer) names(ids []int) []string {
	out := make([]string, len(ids))
	for j, i := range ids {
		out[j] = r.configs[i]
	}
	return out
}

// pct turns a log ratio into percent.
func pct(x float64) float64 { return 100 * math.Expm1(x) }

// Why says why configuration name left the race by round: "behind B by
// 6.1% at C=1; behind A by 3.0% at C=8", each level it was ruled out at,
// or "its launch in round 5 failed"; levels is how many it was out at, so
// that a caller can tell a configuration out everywhere from one still
// live somewhere.
func (res *Result) Why(name string, round int) (why string, levels int) {
	var parts []string
	for _, e := range res.Eliminations {
		switch {
		case e.Config != name || e.Round > round:
		case e.Withdrawn:
			return fmt.Sprintf("its launch in round %d failed", e.Round+1), len(res.Levels)
		default:
			parts = append(parts, fmt.Sprintf("behind %s by %.1f%% at %s", e.By, BehindPct(e.GapPct), e.Level))
		}
	}
	return strings.Join(parts, "; "), len(parts)
}

// BehindPct is how much slower a configuration was than the leader it fell
// behind, percent of the leader's throughput, from the gap an Elimination
// records (the leader over it, less one): a gap of +100% is 50% slower.
func BehindPct(gapPct float64) float64 {
	return 100 * (1 - 1/(1+math.Abs(gapPct)/100))
}

// level is level c's result, with the indices of its selected and
// runner-up (−1 where there is none).
func (r *Racer) level(c int) (LevelResult, int, int) {
	lr := LevelResult{Level: r.levels[c], DecidedAfter: r.closed[c]}
	if len(r.rounds) >= r.o.FirstStage {
		lr.SDPct = 100 * math.Sqrt(r.lastS2[c])
		lr.CloseRound = closeRound(r.lastH2[c], r.lastS2[c], r.delta)
	}
	upto := len(r.rounds)
	if r.closed[c] > 0 {
		upto = r.closed[c]
		lr.Truncated = r.nLive[c] > 1 && r.allow[c] > 0
	}
	var live []int
	for i, ok := range r.live[c] {
		if ok {
			live = append(live, i)
		}
	}
	// Live configurations have every round up to the level's close, so
	// their means there are over the same rounds.
	slices.SortStableFunc(live, func(a, b int) int {
		return cmpDesc(r.meanUpTo(a, c, upto), r.meanUpTo(b, c, upto))
	})
	lr.Live = r.names(live)
	if len(live) == 0 || upto == 0 {
		return lr, -1, -1
	}
	sel, ru, until := live[0], -1, upto
	lr.Selected = r.configs[sel]
	for _, i := range live {
		if r.meanUpTo(sel, c, upto)-r.meanUpTo(i, c, upto) < r.delta {
			lr.Near = append(lr.Near, r.configs[i])
		}
	}
	if len(live) > 1 {
		ru = live[1]
	} else {
		// The last ruled out; of several ruled out at once, the closest.
		var last *elimination
		for j := range r.elims {
			e := &r.elims[j]
			if e.level == c && (last == nil || e.round > last.round || (e.round == last.round && e.gap < last.gap)) {
				last = e
			}
		}
		if last != nil {
			ru, until = last.config, last.round
		}
	}
	if ru >= 0 {
		lr.RunnerUp = r.configs[ru]
		lr.RaceGapPct = pct(r.meanUpTo(sel, c, until) - r.meanUpTo(ru, c, until))
	}
	return lr, sel, ru
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// meanUpTo is configuration i's mean log throughput at level c over rounds
// 1..upto.
func (r *Racer) meanUpTo(i, c, upto int) float64 {
	var s float64
	var n int
	for _, vals := range r.rounds[:min(upto, len(r.rounds))] {
		if y := vals[i][c]; !math.IsNaN(y) {
			s += y
			n++
		}
	}
	return s / float64(n)
}

// single is the configuration with the best mean over levels of its log
// throughput. Configurations ran for different rounds (each from round 1 to
// where it stopped), so each level's mean is taken relative to a reference
// launched in every round, paired by round, and the reference's own mean
// over all rounds added back: the rounds' effects cancel as in the race.
func (r *Racer) single() int {
	ref := 0
	for i, n := range r.n {
		if n > r.n[ref] {
			ref = i
		}
	}
	best, bestScore := 0, math.Inf(-1)
	for i := range r.configs {
		var score float64
		for c := range r.loads() {
			score += r.adjustedMean(i, ref, c)
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// adjustedMean is configuration i's mean at level c relative to ref over
// the rounds both have there, plus ref's mean over all its rounds.
func (r *Racer) adjustedMean(i, ref, c int) float64 {
	var d float64
	var n int
	for _, vals := range r.rounds {
		a, b := vals[i][c], vals[ref][c]
		if !math.IsNaN(a) && !math.IsNaN(b) {
			d += a - b
			n++
		}
	}
	if n == 0 {
		return math.Inf(-1)
	}
	return d/float64(n) + r.meanUpTo(ref, c, len(r.rounds))
}

// confirmRounds checks the confirmation rounds: each names a figure for
// every configuration in want at every level.
func (r *Racer) confirmRounds(confirm []Round, want []bool) ([]Round, error) {
	for j, round := range confirm {
		for i, ok := range want {
			if !ok {
				continue
			}
			if i >= len(round) || len(round[i]) != len(r.levels) {
				return nil, fmt.Errorf("selection: confirmation round %d: no figures for configuration %q", j+1, r.configs[i])
			}
			for c, y := range round[i] {
				if math.IsNaN(y) || math.IsInf(y, 0) {
					return nil, fmt.Errorf("selection: confirmation round %d: configuration %q has no figure at level %q", j+1, r.configs[i], r.levels[c])
				}
			}
		}
	}
	return confirm, nil
}

// advantage is the mean over the confirmation rounds of the selected's log
// throughput less the runner-up's at level c, with its interval on the
// first stage's variance (a pair's difference varies by 2·s2; the first
// stage is independent of the confirmation rounds, so the t interval with
// its df holds whatever the race selected).
func (r *Racer) advantage(conf []Round, c, sel, ru int) *Interval {
	if len(conf) == 0 {
		return nil
	}
	var d float64
	for _, round := range conf {
		d += round[sel][c] - round[ru][c]
	}
	m := float64(len(conf))
	return r.interval(d/m, math.Sqrt(2*r.s2[c]/m), len(conf))
}

// envelope is the geometric mean over levels of each level's selected over
// the single best configuration, on the race (adjusted means) and on the
// confirmation rounds. The confirmation's interval takes the levels as
// correlated in the worst way: the standard deviation of a mean over levels
// is at most the mean of the levels' standard deviations.
func (r *Racer) envelope(conf []Round, sel []int, single int) *Envelope {
	ref := 0
	for i, n := range r.n {
		if n > r.n[ref] {
			ref = i
		}
	}
	nl := float64(r.loads())
	env := &Envelope{Single: r.configs[single]}
	var race float64
	for c := range r.loads() {
		race += (r.adjustedMean(sel[c], ref, c) - r.adjustedMean(single, ref, c)) / nl
	}
	env.RacePct = pct(race)
	if len(conf) == 0 {
		return env
	}
	var d, sd float64
	for c := range r.loads() {
		if sel[c] == single {
			continue
		}
		sd += math.Sqrt(2*r.s2[c]) / nl
		for _, round := range conf {
			d += (round[sel[c]][c] - round[single][c]) / nl
		}
	}
	m := float64(len(conf))
	env.Confirmed = r.interval(d/m, sd/math.Sqrt(m), len(conf))
	return env
}

// interval is est ± t·se at Confidence with the first stage's df, in
// percent.
func (r *Racer) interval(est, se float64, rounds int) *Interval {
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(r.df)}.Quantile(1 - (1-Confidence)/2)
	return &Interval{Pct: pct(est), LoPct: pct(est - t*se), HiPct: pct(est + t*se), Rounds: rounds, DF: r.df}
}

// loads is how many of the levels, from the first, are loads
// (Options.LoadLevels).
func (r *Racer) loads() int {
	if n := r.o.LoadLevels; n > 0 && n < len(r.levels) {
		return n
	}
	return len(r.levels)
}
