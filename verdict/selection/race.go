package selection

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Round is one round's figures: Round[i][c] is configuration i's log
// throughput at level c (each launch sweeps every level). A configuration
// not launched that round has a nil row; a level a launch has no figure for
// is NaN, allowed after the first stage where the configuration is ruled
// out or the level already decided.
type Round [][]float64

// Race is a whole race's records: the rounds in order, and the
// confirmation rounds run after it ended.
type Race struct {
	Configs []string
	Levels  []string
	Rounds  []Round
	// Confirm holds the confirmation rounds: only the configurations
	// Result.Confirm names need figures in them.
	Confirm []Round
}

// Run replays the race's looks, one after each round, and returns where
// they leave it. It is a pure function of the records: a configuration's
// figures in a round after it stopped being launched decide nothing, and
// rounds after the race ended are ignored.
func Run(race Race, o Options) (*Result, error) {
	r, err := NewRacer(race.Configs, race.Levels, o)
	if err != nil {
		return nil, err
	}
	for _, round := range race.Rounds {
		if r.Done() {
			break
		}
		if err := r.Add(round); err != nil {
			return nil, err
		}
	}
	return r.Result(race.Confirm)
}

// Racer is a race in progress: Next says which configurations to launch,
// Add takes the round's figures and looks.
type Racer struct {
	configs, levels []string
	o               Options
	delta           float64 // the indifference zone in log throughput
	df              int     // of the first stage's pooled variance
	h2              float64
	procedure       procedure

	rounds [][][]float64 // [round][config][level]; NaN where none
	n      []int         // rounds each configuration was launched: 1..n[i]
	sum    [][]float64   // [config][level] over the rounds launched
	cnt    [][]int       // [config][level] figures in sum

	live   [][]bool  // [level][config]
	nLive  []int     // per level
	s2     []float64 // per level: the first stage's variance of one launch
	closed []int     // per level: the round after which it was decided, 0 while open
	allow  []float64 // per level: the allowance at its last look
	// lastS2 and lastH2 are, per level, the variance and h² behind the
	// allowance at its last look.
	lastS2, lastH2 []float64
	elims          []elimination
	looks          []look
	done           bool
}

// elimination is one configuration ruled out at one level.
type elimination struct {
	config, level, round, by int
	gap, allowance           float64 // log throughput
}

// look is the state after one round.
type look struct {
	round    int
	launched []int
	live     [][]int // per level
	allow    []float64
}

// procedure is how the race sets its allowance: KN's by default. The tests
// swap in broken ones to show their bounds have teeth.
type procedure struct {
	// variance is the variance of one launch at one level from a table of
	// rounds in which every configuration in it was launched,
	// x[round][config]: the first stage's, and at later looks the live
	// configurations' rounds so far.
	variance func(x [][]float64) float64
	// allowance is how far below the leader a configuration may be after r
	// rounds and stay live.
	allowance func(r int, h2, s2, delta float64) float64
	// firstStageOnly keeps the first stage's variance to the end, as KN
	// does, without the update at later looks: the study of why the
	// update is there (TestSelectionWithoutTheUpdate).
	firstStageOnly bool
}

var kn = procedure{variance: pooledVariance, allowance: allowance}

// NewRacer starts a race of configs at levels.
func NewRacer(configs, levels []string, o Options) (*Racer, error) {
	return newRacer(configs, levels, o, kn)
}

func newRacer(configs, levels []string, o Options, p procedure) (*Racer, error) {
	k, nl := len(configs), len(levels)
	if k < 2 {
		return nil, fmt.Errorf("selection: %d configurations: a race needs at least 2", k)
	}
	if nl == 0 {
		return nil, errors.New("selection: no levels")
	}
	for _, names := range [][]string{configs, levels} {
		seen := map[string]bool{}
		for _, s := range names {
			if s == "" || seen[s] {
				return nil, fmt.Errorf("selection: name %q is empty or repeated", s)
			}
			seen[s] = true
		}
	}
	o, err := o.normalise(k)
	if err != nil {
		return nil, fmt.Errorf("selection: %w", err)
	}
	df := (k - 1) * (o.FirstStage - 1)
	r := &Racer{
		configs: slices.Clone(configs), levels: slices.Clone(levels), o: o, procedure: p,
		delta: math.Log1p(o.Delta), df: df, h2: h2(k, df, o.PCS),
		n: make([]int, k), sum: grid(k, nl), cnt: make([][]int, k),
		live: make([][]bool, nl), nLive: make([]int, nl),
		s2: make([]float64, nl), closed: make([]int, nl), allow: make([]float64, nl),
		lastS2: make([]float64, nl), lastH2: make([]float64, nl),
	}
	for i := range r.cnt {
		r.cnt[i] = make([]int, nl)
	}
	for c := range r.live {
		r.live[c] = make([]bool, k)
		for i := range r.live[c] {
			r.live[c][i] = true
		}
		r.nLive[c] = k
		r.allow[c] = math.Inf(1)
	}
	return r, nil
}

func grid(a, b int) [][]float64 {
	out := make([][]float64, a)
	for i := range out {
		out[i] = make([]float64, b)
	}
	return out
}

// Done reports whether the race has ended: every level decided, or the
// maximum reached.
func (r *Racer) Done() bool { return r.done }

// Next is the configurations to launch in the next round, in campaign
// order: those live at a level still undecided. None once Done.
func (r *Racer) Next() []string {
	var out []string
	for _, i := range r.next() {
		out = append(out, r.configs[i])
	}
	return out
}

func (r *Racer) next() []int {
	if r.done {
		return nil
	}
	var out []int
	for i := range r.configs {
		for c := range r.levels {
			if r.closed[c] == 0 && r.live[c][i] {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// Withdraw takes configuration name out of the race before the next
// round, at every level it is live at: a configuration whose launch failed
// has no figure to rank in that round, and one that fails to launch is no
// configuration to serve. It cannot be withdrawn during the first stage,
// whose variance needs every configuration's every round; leave such a
// configuration out of the race instead.
func (r *Racer) Withdraw(name string) error {
	i := slices.Index(r.configs, name)
	switch {
	case i < 0:
		return fmt.Errorf("selection: no configuration %q", name)
	case r.done:
		return errors.New("selection: the race is over")
	case len(r.rounds) < r.o.FirstStage:
		return fmt.Errorf("selection: %q cannot be withdrawn during the first stage (round %d of %d)", name, len(r.rounds)+1, r.o.FirstStage)
	}
	rn := len(r.rounds)
	for c := range r.levels {
		if r.live[c][i] && r.closed[c] == 0 {
			r.live[c][i] = false
			r.nLive[c]--
			r.elims = append(r.elims, elimination{config: i, level: c, round: rn, by: -1})
			if r.nLive[c] <= 1 {
				r.closed[c] = rn
			}
		}
	}
	r.done = !slices.Contains(r.closed, 0)
	return nil
}

// Add takes the next round's figures and takes the look after it.
func (r *Racer) Add(round Round) error {
	if r.done {
		return errors.New("selection: the race is over")
	}
	rn := len(r.rounds) + 1
	want := r.next()
	first := rn <= r.o.FirstStage
	vals := make([][]float64, len(r.configs))
	for i := range vals {
		vals[i] = nanRow(len(r.levels))
	}
	for _, i := range want {
		var row []float64
		if i < len(round) {
			row = round[i]
		}
		if row != nil && len(row) != len(r.levels) {
			return fmt.Errorf("selection: round %d: configuration %q has %d figures for %d levels", rn, r.configs[i], len(row), len(r.levels))
		}
		for c := range r.levels {
			var y float64
			if row == nil {
				y = math.NaN()
			} else {
				y = row[c]
			}
			// The first stage's variance needs every figure; after it, a
			// launch needs figures only where its configuration can still
			// be ruled out or win.
			if math.IsInf(y, 0) || (math.IsNaN(y) && (first || (r.live[c][i] && r.closed[c] == 0))) {
				return fmt.Errorf("selection: round %d: configuration %q has no figure at level %q, where it is live", rn, r.configs[i], r.levels[c])
			}
			vals[i][c] = y
			if !math.IsNaN(y) {
				r.sum[i][c] += y
				r.cnt[i][c]++
			}
		}
		r.n[i]++
	}
	r.rounds = append(r.rounds, vals)
	if rn == r.o.FirstStage {
		r.firstStage()
	}
	if rn >= r.o.FirstStage {
		for c := range r.levels {
			if r.closed[c] == 0 {
				r.eliminate(c, rn)
			}
		}
	}
	r.done = rn == r.o.MaxRounds || !slices.Contains(r.closed, 0)
	r.looks = append(r.looks, r.snapshot(rn, want))
	return nil
}

func nanRow(n int) []float64 {
	row := make([]float64, n)
	for c := range row {
		row[c] = math.NaN()
	}
	return row
}

// firstStage estimates each level's variance from the first stage's
// rounds, in which every configuration was launched.
func (r *Racer) firstStage() {
	for c := range r.levels {
		x := make([][]float64, len(r.rounds))
		for j, vals := range r.rounds {
			x[j] = make([]float64, len(r.configs))
			for i := range r.configs {
				x[j][i] = vals[i][c]
			}
		}
		r.s2[c] = r.procedure.variance(x)
	}
}

// pooledVariance is the residual mean square of the rounds × configurations
// table x (an additive fit of rounds and configurations): the variance of
// one launch about its configuration's mean once the round's effect, shared
// by every launch of the round, is taken out. The mean over pairs of the
// variance of their within-round differences is twice it, so it is what
// KN's pairwise variances estimate when every configuration's launches vary
// alike, with (k−1)(n0−1) degrees of freedom.
func pooledVariance(x [][]float64) float64 {
	n, k := len(x), len(x[0])
	rowMean := make([]float64, n)
	colMean := make([]float64, k)
	var grand float64
	for j, row := range x {
		for i, y := range row {
			rowMean[j] += y / float64(k)
			colMean[i] += y / float64(n)
			grand += y / float64(n*k)
		}
	}
	var ss float64
	for j, row := range x {
		for i, y := range row {
			e := y - rowMean[j] - colMean[i] + grand
			ss += e * e
		}
	}
	return ss / float64((n-1)*(k-1))
}

// eliminate takes the look at level c after round rn: every live
// configuration more than the allowance below the leader (the best mean of
// the live set over rounds 1..rn) is out. All live configurations have
// every round, so their means are over the same rounds and the round
// effects cancel in every difference, as in KN's pairwise sums. With one
// variance for every pair, the leader is the pair that rules any
// configuration out if any pair does, so comparing with it is KN's
// screening against the whole live set.
func (r *Racer) eliminate(c, rn int) {
	lead, best := -1, math.Inf(-1)
	for i, ok := range r.live[c] {
		if ok && r.mean(i, c) > best {
			lead, best = i, r.mean(i, c)
		}
	}
	s2, h := r.variance(c, rn)
	r.lastS2[c], r.lastH2[c] = s2, h
	w := r.procedure.allowance(rn, h, s2, r.delta)
	r.allow[c] = w
	for i, ok := range r.live[c] {
		if !ok || i == lead {
			continue
		}
		if gap := best - r.mean(i, c); gap > w {
			r.live[c][i] = false
			r.nLive[c]--
			r.elims = append(r.elims, elimination{config: i, level: c, round: rn, by: lead, gap: gap, allowance: w})
		}
	}
	if r.nLive[c] <= 1 || w == 0 || rn == r.o.MaxRounds {
		r.closed[c] = rn
	}
}

// variance is the variance of one launch at level c, and the h² to go
// with it, for the look after round rn: the first stage's (KN), or, where
// it gives a larger allowance, the live configurations' rounds 1..rn
// pooled as the first stage was, with their degrees of freedom (KN++'s
// update, Kim & Nelson 2006). The first stage is few rounds; a host whose
// launches have heavy tails gives it a variance too low more often than
// the chi-squared allows, and the update, on many more launches, corrects
// it where that matters most, near the end of the race. Taking the larger
// never makes an allowance smaller than KN's.
func (r *Racer) variance(c, rn int) (s2, h float64) {
	s2, h = r.s2[c], r.h2
	if rn <= r.o.FirstStage || r.nLive[c] < 2 || r.procedure.firstStageOnly {
		return s2, h
	}
	x := make([][]float64, rn)
	for j, vals := range r.rounds {
		x[j] = make([]float64, 0, r.nLive[c])
		for i, ok := range r.live[c] {
			if ok {
				x[j] = append(x[j], vals[i][c])
			}
		}
	}
	u := r.procedure.variance(x)
	uh := h2(len(r.configs), (r.nLive[c]-1)*(rn-1), r.o.PCS)
	if u*uh > s2*h {
		return u, uh
	}
	return s2, h
}

// mean is configuration i's mean log throughput at level c over the rounds
// it has there.
func (r *Racer) mean(i, c int) float64 {
	if r.cnt[i][c] == 0 {
		return math.NaN()
	}
	return r.sum[i][c] / float64(r.cnt[i][c])
}

func (r *Racer) snapshot(rn int, launched []int) look {
	l := look{round: rn, launched: launched, live: make([][]int, len(r.levels)), allow: slices.Clone(r.allow)}
	for c := range r.levels {
		for i, ok := range r.live[c] {
			if ok {
				l.live[c] = append(l.live[c], i)
			}
		}
	}
	return l
}
