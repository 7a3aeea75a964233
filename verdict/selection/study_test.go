package selection

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The study: races of each space on each host, the procedure against the
// fixed design and against the argmax of one launch each.

// space is one set of configurations raced, with their true means.
type space struct {
	name  string
	truth [][]float64 // [config][level], log throughput
	names []string
}

// spaces are the cases studied at the default delta.
func spaces() []space {
	spec24, names24 := speculative(1)
	spec48, names48 := speculative(2)
	return []space{
		{name: "slippage, 24", truth: slippage(24, DefaultDelta), names: configNames(24)},
		{name: "slippage, 48", truth: slippage(48, DefaultDelta), names: configNames(48)},
		{name: "two delta apart, 24", truth: twoApart(24, DefaultDelta), names: configNames(24)},
		{name: "all equal, 24", truth: equal(24), names: configNames(24)},
		{name: "speculative, 24", truth: spec24, names: names24},
		{name: "speculative, 48", truth: spec48, names: names48},
	}
}

// good reports whether choosing i at level c is a correct selection: its
// true mean within delta of the best (strictly, so that in the slippage
// configuration only the best is correct).
func good(truth [][]float64, i, c int, delta float64) bool {
	best := math.Inf(-1)
	for _, row := range truth {
		best = max(best, row[c])
	}
	return best-truth[i][c] < math.Log1p(delta)-1e-9
}

// tally adds up one design's races.
type tally struct {
	races, levels     int
	correct           []int // per level
	launches          int   // in the race, all configurations
	confirmLaunches   int
	truncated         int     // levels the maximum cut off
	bias              float64 // reported advantage less the truth, pp, summed over levels
	biasRace          float64 // the race's own figure's, for the procedure
	covered, judged   int     // the advantage's interval holding the truth
	envBias, envTruth float64 // the envelope's reported less true, and the true, pp, summed over races
	envJudged         int
	rounds            int
}

func newTally(levels int) *tally { return &tally{levels: levels, correct: make([]int, levels)} }

// pcs is the smallest share of correct selections over the levels.
func (t *tally) pcs() float64 {
	out := 1.0
	for _, n := range t.correct {
		out = min(out, float64(n)/float64(max(t.races, 1)))
	}
	return out
}

// perConfig is the race's mean launches per configuration.
func (t *tally) perConfig(k int) float64 {
	return float64(t.launches) / float64(max(t.races, 1)) / float64(k)
}

func (t *tally) meanBias() float64 { return t.bias / float64(max(t.races*t.levels, 1)) }

func (t *tally) meanBiasRace() float64 { return t.biasRace / float64(max(t.races*t.levels, 1)) }

func (t *tally) coverage() float64 { return float64(t.covered) / float64(max(t.judged, 1)) }

// confirmRounds is the confirmation rounds the study runs after each race.
const confirmRounds = 2

// raceOnce runs one race of sp on a host of nz under o, then its
// confirmation rounds, and adds it to t.
func raceOnce(t *tally, sp space, nz noise, o Options, p procedure, seed uint64) (*Result, error) {
	rc, err := newRacer(sp.names, levelNames(), o, p)
	if err != nil {
		return nil, err
	}
	h := newHost(nz, sp.truth, seed)
	for !rc.Done() {
		launch := rc.next()
		t.launches += len(launch)
		if err := rc.Add(h.launch(launch)); err != nil {
			return nil, err
		}
	}
	res, err := rc.Result(nil)
	if err != nil {
		return nil, err
	}
	confirm := make([]int, 0, len(res.Confirm))
	for _, name := range res.Confirm {
		confirm = append(confirm, slices.Index(sp.names, name))
	}
	var conf []Round
	for range confirmRounds {
		conf = append(conf, h.launch(confirm))
		t.confirmLaunches += len(confirm)
	}
	if res, err = rc.Result(conf); err != nil {
		return nil, err
	}
	t.races++
	t.rounds += res.Rounds
	sel := make([]int, len(res.Levels))
	for c, lr := range res.Levels {
		i, ru := slices.Index(sp.names, lr.Selected), slices.Index(sp.names, lr.RunnerUp)
		sel[c] = i
		if good(sp.truth, i, c, o.Delta) {
			t.correct[c]++
		}
		if lr.Truncated {
			t.truncated++
		}
		if ru < 0 || lr.Advantage == nil {
			continue
		}
		truth := pct(sp.truth[i][c] - sp.truth[ru][c])
		t.bias += lr.Advantage.Pct - truth
		t.biasRace += lr.RaceGapPct - truth
		t.judged++
		if lr.Advantage.LoPct <= truth && truth <= lr.Advantage.HiPct {
			t.covered++
		}
	}
	if env := res.Envelope; env != nil && env.Confirmed != nil {
		single := slices.Index(sp.names, env.Single)
		var truth float64
		for c := range sel {
			truth += (sp.truth[sel[c]][c] - sp.truth[single][c]) / float64(len(sel))
		}
		t.envBias += env.Confirmed.Pct - pct(truth)
		t.envTruth += pct(truth)
		t.envJudged++
	}
	return res, nil
}

// fixedOnce runs the fixed design (every configuration every round) for
// the largest of rounds on a host of nz and judges it, by the argmax of the
// means, after each of rounds into the tally of the same index: 1 is the
// argmax of one launch each.
func fixedOnce(ts []*tally, sp space, nz noise, rounds []int, delta float64, seed uint64) {
	k, nl := len(sp.truth), len(sp.truth[0])
	h := newHost(nz, sp.truth, seed)
	sum := grid(k, nl)
	for r := 1; r <= slices.Max(rounds); r++ {
		round := h.launch(all(k))
		for i := range round {
			for c, y := range round[i] {
				sum[i][c] += y
			}
		}
		for j, n := range rounds {
			if n == r {
				judgeArgmax(ts[j], sp, sum, r, delta)
			}
		}
	}
}

// judgeArgmax adds to t the selection of the best mean at each level of a
// table of sums over n launches each, and the bias of its lead over the
// second-best mean.
func judgeArgmax(t *tally, sp space, sum [][]float64, n int, delta float64) {
	k := len(sum)
	t.races++
	t.launches += n * k
	for c := range sum[0] {
		first, second := -1, -1
		for i := range k {
			switch {
			case first < 0 || sum[i][c] > sum[first][c]:
				first, second = i, first
			case second < 0 || sum[i][c] > sum[second][c]:
				second = i
			}
		}
		if good(sp.truth, first, c, delta) {
			t.correct[c]++
		}
		est := pct((sum[first][c] - sum[second][c]) / float64(n))
		t.bias += est - pct(sp.truth[first][c]-sp.truth[second][c])
	}
}

// studyRow is one space on one host: the procedure, the fixed design of
// the rounds its guarantee needs, the fixed design of as many launches as
// the procedure took, and the argmax of one launch each.
type studyRow struct {
	space, noise      string
	delta             float64
	k                 int
	maxRounds         int // the procedure's cap; 0: none
	proc              *tally
	fixed, equal, one *tally
	fixedRounds       int // the fixed design's: the mean round the procedure's guarantee needs, rounded up
	equalRounds       int // the procedure's mean launches per configuration, confirmation included, rounded
	closeRound        float64
	trueEnvelope      float64 // the best per level over the best single configuration, pp
}

// launchesPerConfig is the procedure's race and confirmation launches per
// configuration.
func (r studyRow) launchesPerConfig() (race, confirm float64) {
	n := float64(r.proc.races * r.k)
	return float64(r.proc.launches) / n, float64(r.proc.confirmLaunches) / n
}

func (r studyRow) String() string {
	race, conf := r.launchesPerConfig()
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s: PCS %.1f%% (fixed %d rounds %.1f%%, fixed %d rounds %.1f%%, argmax of one %.1f%%); launches per configuration %.2f + %.2f confirming; rounds %.1f, guarantee needs %.1f, levels cut off by the maximum %.1f%%; ",
		r.space, r.noise, 100*r.proc.pcs(), r.fixedRounds, 100*r.fixed.pcs(), r.equalRounds, 100*r.equal.pcs(), 100*r.one.pcs(),
		race, conf, float64(r.proc.rounds)/float64(r.proc.races), r.closeRound, 100*float64(r.proc.truncated)/float64(r.proc.races*r.proc.levels))
	fmt.Fprintf(&b, "bias of the lead (pp): confirmed %+.2f (interval holds it %.1f%%), race %+.2f, fixed %+.2f, equal %+.2f, argmax of one %+.2f",
		r.proc.meanBias(), 100*r.proc.coverage(), r.proc.meanBiasRace(), r.fixed.meanBias(), r.equal.meanBias(), r.one.meanBias())
	if r.proc.envJudged > 0 {
		fmt.Fprintf(&b, "; envelope %.2f%% (against the true best single %.2f%%), bias %+.2f pp",
			r.proc.envTruth/float64(r.proc.envJudged), r.trueEnvelope, r.proc.envBias/float64(r.proc.envJudged))
	}
	return b.String()
}

// study runs races races of sp on nz under o, then the fixed designs on as
// many other nights.
func study(sp space, nz noise, o Options, races int, seed uint64) (studyRow, error) {
	nl := len(sp.truth[0])
	row := studyRow{space: sp.name, noise: nz.name, delta: o.Delta, k: len(sp.truth), maxRounds: o.MaxRounds,
		proc: newTally(nl), fixed: newTally(nl), equal: newTally(nl), one: newTally(nl), trueEnvelope: trueEnvelope(sp.truth)}
	var closeSum float64
	for j := range uint64(races) {
		res, err := raceOnce(row.proc, sp, nz, o, kn, seed+j)
		if err != nil {
			return row, err
		}
		for _, lr := range res.Levels {
			closeSum += float64(lr.CloseRound) / float64(nl)
		}
	}
	row.closeRound = closeSum / float64(races)
	row.fixedRounds = int(math.Ceil(row.closeRound))
	if o.MaxRounds > 0 {
		row.fixedRounds = o.MaxRounds
	}
	race, conf := row.launchesPerConfig()
	row.equalRounds = max(1, int(math.Round(race+conf)))
	for j := range uint64(races) {
		fixedOnce([]*tally{row.one, row.equal, row.fixed}, sp, nz, []int{1, row.equalRounds, row.fixedRounds}, o.Delta, seed+j+1<<32)
	}
	return row, nil
}

// trueEnvelope is the geometric mean over levels of the best configuration
// at each level over the best single configuration, percent.
func trueEnvelope(truth [][]float64) float64 {
	nl := len(truth[0])
	bestSingle := math.Inf(-1)
	for _, row := range truth {
		var s float64
		for _, y := range row {
			s += y / float64(nl)
		}
		bestSingle = max(bestSingle, s)
	}
	var env float64
	for c := range nl {
		best := math.Inf(-1)
		for _, row := range truth {
			best = max(best, row[c])
		}
		env += best / float64(nl)
	}
	return pct(env - bestSingle)
}

// The study's tables, as docs/METHOD.md shows them.

func mdRow(cells ...string) string { return "| " + strings.Join(cells, " | ") + " |\n" }

func mdHeader(cells ...string) string {
	sep := make([]string, len(cells))
	for i := range sep {
		sep[i] = "---"
	}
	return mdRow(cells...) + mdRow(sep...)
}

func pctf(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// pcsTable: per space and host, the smallest level's PCS and the launches
// per configuration (race + confirmation).
func pcsTable(rows []studyRow) string {
	var b strings.Builder
	head := []string{"space"}
	for _, nz := range noises {
		head = append(head, nz.name)
	}
	b.WriteString(mdHeader(head...))
	for _, sp := range spaces() {
		cells := []string{sp.name}
		for _, nz := range noises {
			for _, r := range rows {
				if r.space == sp.name && r.noise == nz.name {
					race, conf := r.launchesPerConfig()
					cells = append(cells, fmt.Sprintf("%s, %.1f + %.1f", pctf(r.proc.pcs()), race, conf))
				}
			}
		}
		b.WriteString(mdRow(cells...))
	}
	return b.String()
}

// comparisonTable: on one host, the procedure against the fixed design of
// the rounds its guarantee needs, the fixed design of its launches, and the
// argmax of one launch each: PCS, launches per configuration, bias of the
// reported lead.
func comparisonTable(rows []studyRow, host string) string {
	var b strings.Builder
	b.WriteString(mdHeader("space", "procedure: PCS, launches, bias", "fixed to the guarantee's rounds", "fixed, as many launches", "argmax of one"))
	for _, r := range rows {
		if r.noise != host {
			continue
		}
		race, conf := r.launchesPerConfig()
		cell := func(t *tally, rounds int) string {
			return fmt.Sprintf("%s, %d, %+.2f pp", pctf(t.pcs()), rounds, t.meanBias())
		}
		b.WriteString(mdRow(r.space,
			fmt.Sprintf("%s, %.1f, %+.2f pp", pctf(r.proc.pcs()), race+conf, r.proc.meanBias()),
			cell(r.fixed, r.fixedRounds), cell(r.equal, r.equalRounds), cell(r.one, 1)))
	}
	return b.String()
}

// biasTable: per space and host, the bias of the lead over the runner-up
// as reported (confirmed), as the race saw it, and by the argmax of one,
// with how often the confirmed interval held the truth.
func biasTable(rows []studyRow) string {
	var b strings.Builder
	b.WriteString(mdHeader("space", "host", "confirmed (interval holds it)", "race's own figure", "argmax of one", "envelope: true, bias"))
	for _, r := range rows {
		env := "–"
		if r.proc.envJudged > 0 && r.trueEnvelope > 0.05 {
			env = fmt.Sprintf("%.2f%%, %+.2f pp", r.trueEnvelope, r.proc.envBias/float64(r.proc.envJudged))
		}
		b.WriteString(mdRow(r.space, r.noise,
			fmt.Sprintf("%+.2f pp (%s)", r.proc.meanBias(), pctf(r.proc.coverage())),
			fmt.Sprintf("%+.2f pp", r.proc.meanBiasRace()), fmt.Sprintf("%+.2f pp", r.one.meanBias()), env))
	}
	return b.String()
}

// capTable: the procedure under a maximum of rounds: PCS, launches, the
// levels the maximum cut off, against the fixed design of the maximum.
func capTable(rows []studyRow) string {
	var b strings.Builder
	b.WriteString(mdHeader("space", "max", "PCS", "launches per configuration", "levels cut off", "fixed design of the max: PCS"))
	for _, r := range rows {
		race, conf := r.launchesPerConfig()
		b.WriteString(mdRow(r.space, strconv.Itoa(r.maxRounds), pctf(r.proc.pcs()),
			fmt.Sprintf("%.1f + %.1f", race, conf), pctf(float64(r.proc.truncated)/float64(r.proc.races*r.proc.levels)), pctf(r.fixed.pcs())))
	}
	return b.String()
}

// deltaTable: the procedure with wider indifference zones: PCS (within
// that zone of the best), launches, rounds, against the argmax of one.
func deltaTable(rows []studyRow) string {
	var b strings.Builder
	b.WriteString(mdHeader("space", "delta", "PCS", "launches per configuration", "rounds", "the guarantee needs", "argmax of one: PCS"))
	for _, r := range rows {
		race, conf := r.launchesPerConfig()
		b.WriteString(mdRow(r.space, fmt.Sprintf("%.0f%%", 100*r.delta), pctf(r.proc.pcs()), fmt.Sprintf("%.1f + %.1f", race, conf),
			fmt.Sprintf("%.1f", float64(r.proc.rounds)/float64(r.proc.races)), fmt.Sprintf("%.1f", r.closeRound), pctf(r.one.pcs())))
	}
	return b.String()
}
