package verdict

import (
	"cmp"
	"math"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// compareLevels compares scenario b against scenario a (the reference) at
// every level both measured: b's throughput over a's.
//
// With paired set (two scenarios of one run), the launches are paired by
// round: each round gives one log ratio per level, and the error comes from
// the variation of those ratios between rounds, pooled over the levels
// (rule.PooledVar). Without pairing (one scenario in two runs), or when no
// level has two paired rounds, each side's launch-to-launch variance is
// estimated on its own and the two are combined as in Welch's test; a side
// with one launch borrows the other side's variance (the same server on the
// same kind of host). With one launch on each side there is no
// launch-to-launch variance at all: the within-launch samples give the error
// (MethodWithinLaunch), and decide requires the minimum effect.
//
// A paired comparison may borrow degrees of freedom from a host's noise
// profile (prior, prior.go); nil lends none. own is the paired comparison's
// launch variance before any prior, with each level's, for the profile to
// learn from; nil when unpaired.
func compareLevels(a, b []Level, paired bool, conf float64, prior *NoisePrior) (out map[measure.Level]*Comparison, own *ownNoise) {
	common := commonLevels(a, b)
	if len(common) == 0 {
		return nil, nil
	}
	if paired {
		if out, own := comparePaired(common, conf, prior); out != nil {
			return out, own
		}
	}
	return compareUnpaired(common, conf), nil
}

// ownNoise is one pair's launch variance from tonight's rounds alone, with
// each level's, and how the prior served it (nil without one).
type ownNoise struct {
	pooled rule.Var
	levels map[measure.Level]rule.Var
	prior  *PriorUse
}

// levelPair is one level measured on both sides.
type levelPair struct {
	c    measure.Level
	a, b *Level
}

func commonLevels(a, b []Level) []levelPair {
	var out []levelPair
	for i := range a {
		for j := range b {
			if a[i].Level == b[j].Level && a[i].measured() && b[j].measured() {
				out = append(out, levelPair{a[i].Level, &a[i], &b[j]})
			}
		}
	}
	return out
}

// comparePaired is the paired comparison by round; nil when no level has
// two rounds measured on both sides.
func comparePaired(ps []levelPair, conf float64, prior *NoisePrior) (map[measure.Level]*Comparison, *ownNoise) {
	both := make([]Level, 0, 2*len(ps))
	for _, p := range ps {
		both = append(both, *p.a, *p.b)
	}
	rounds := roundIndex(both)
	table := make([][]float64, len(ps))
	for i, p := range ps {
		ra, rb := launchRow(p.a, rounds), launchRow(p.b, rounds)
		table[i] = make([]float64, len(rounds))
		for k := range table[i] {
			table[i][k] = rb[k] - ra[k] // NaN unless both launched in that round
		}
	}
	lv := rule.PooledVar(table)
	if lv.DF <= 0 {
		return nil, nil
	}
	own := &ownNoise{pooled: lv, levels: map[measure.Level]rule.Var{}}
	for i, p := range ps {
		if row := rule.PooledVar(table[i : i+1]); row.DF > 0 {
			own.levels[p.c] = row
		}
	}
	tonight := lv
	lv, own.prior = prior.combine(lv)
	lent := own.prior != nil && own.prior.Agreed
	serial := rule.SerialInflation(table)
	out := map[measure.Level]*Comparison{}
	for i, p := range ps {
		mean, n := rule.RowMean(table[i])
		if n == 0 {
			continue
		}
		v, df, noisy := rule.LevelVar(table, i, lv)
		e := rule.Diff{D: mean, SE: math.Sqrt(v / float64(n)), DF: df}
		c := newComparison(e, MethodLaunches, n, math.Sqrt(v), conf)
		c.WithinShare = withinShare(p, v)
		c.NoisyLevel = noisy
		c.serial = serial
		if lent && !noisy {
			vo, dfo, _ := rule.LevelVar(table, i, tonight)
			c.own = rule.Diff{D: mean, SE: math.Sqrt(vo / float64(n)), DF: dfo}
		}
		out[p.c] = &c
	}
	return out, own
}

// compareUnpaired compares the two sides' level means with each side's own
// launch-to-launch variance, or the within-launch samples when neither side
// has one.
func compareUnpaired(ps []levelPair, conf float64) map[measure.Level]*Comparison {
	side := func(pick func(levelPair) *Level) ([][]float64, rule.Var) {
		ls := make([]Level, len(ps))
		for i, p := range ps {
			ls[i] = *pick(p)
		}
		rounds := roundIndex(ls)
		table := make([][]float64, len(ls))
		for i := range ls {
			table[i] = launchRow(&ls[i], rounds)
		}
		return table, rule.PooledVar(table)
	}
	ta, va := side(func(p levelPair) *Level { return p.a })
	tb, vb := side(func(p levelPair) *Level { return p.b })
	switch {
	case va.DF <= 0 && vb.DF > 0:
		va = vb
	case vb.DF <= 0 && va.DF > 0:
		vb = va
	}
	out := map[measure.Level]*Comparison{}
	for i, p := range ps {
		ma, na := rule.RowMean(ta[i])
		mb, nb := rule.RowMean(tb[i])
		if na == 0 || nb == 0 {
			continue
		}
		var c Comparison
		if va.DF > 0 {
			wa, wb := va.Var/float64(na), vb.Var/float64(nb)
			e := rule.Diff{D: mb - ma, SE: math.Sqrt(wa + wb)}
			switch {
			case va == vb: // one estimate serves both sides
				e.DF = va.DF
			case wa+wb > 0:
				e.DF = (wa + wb) * (wa + wb) / (wa*wa/va.DF + wb*wb/vb.DF)
			default:
				e.DF = va.DF + vb.DF
			}
			c = newComparison(e, MethodLaunches, min(na, nb), math.Sqrt((va.Var+vb.Var)/2), conf)
		} else {
			e := rule.Welch(p.a.Samples, p.b.Samples)
			e.D = mb - ma
			_, sa, _ := rule.LogMoments(p.a.Samples)
			_, sb, _ := rule.LogMoments(p.b.Samples)
			c = newComparison(e, MethodWithinLaunch, 1, math.Sqrt((sa+sb)/2), conf)
		}
		out[p.c] = &c
	}
	return out
}

// withinShare estimates what part of one round's variance the within-launch
// sampling noise accounts for, from the samples' own spread: near 1, more
// requests per level would narrow the interval; near 0, only more rounds
// will.
func withinShare(p levelPair, roundVar float64) float64 {
	if roundVar <= 0 {
		return 0
	}
	var w float64
	for _, l := range []*Level{p.a, p.b} {
		var sum float64
		k := 0
		for _, ll := range l.Launches {
			_, v, n := rule.LogMoments(ll.Samples)
			if n >= 2 {
				sum += v / float64(n)
				k++
			}
		}
		if k > 0 {
			w += sum / float64(k)
		}
	}
	return math.Min(1, w/roundVar)
}

// flip turns the comparison of b against a into a against b.
func (c Comparison) flip() Comparison {
	f := c
	f.est.D = -c.est.D
	f.Speedup = 1 / c.Speedup
	f.DeltaPct = pctOf(-c.est.D)
	f.SpeedupLo, f.SpeedupHi = 1/c.SpeedupHi, 1/c.SpeedupLo
	if c.OutcomeLo > 0 {
		f.OutcomeLo, f.OutcomeHi = 1/c.OutcomeHi, 1/c.OutcomeLo
	}
	switch c.Outcome {
	case OutcomeFaster:
		f.Outcome = OutcomeSlower
	case OutcomeSlower:
		f.Outcome = OutcomeFaster
	}
	return f
}

// pairKey names one comparison of the run: scenario j against scenario i
// (i < j, indices into Verdict.Scenarios) at level c.
type pairKey struct {
	i, j int
	c    measure.Level
}

// compare orders keys as the family is: by pair, then level.
func (k pairKey) compare(o pairKey) int {
	return cmp.Or(cmp.Compare(k.i, o.i), cmp.Compare(k.j, o.j), k.c.Compare(o.c))
}

// comparePairs makes every comparison of the run on the launches given:
// each pair of measured scenarios at each level they share, in the family's
// order (by pair, then level), undecided. A round whose two launches ran on
// different hosts is left out (hosts.go); mixed names those rounds. upTo,
// when above 0, keeps the launches of replicates up to it (a look). In a
// split layout two variants that share no part are compared through the
// baseline (replicates.go). At a look (upTo above 0) pairs also holds the
// comparisons the look doubts, as OutcomeDoubted, outside the family.
func comparePairs(v *Verdict, upTo int) (pairs map[pairKey]*Comparison, family []pairKey, mixed []MixedHostRounds) {
	n := len(v.Scenarios)
	pairs = map[pairKey]*Comparison{}
	if upTo == 0 {
		v.doubted = map[pairKey]*Comparison{}
	}
	base := v.scenario(v.Baseline)
	for i := range n {
		for j := i + 1; j < n; j++ {
			a, b := &v.Scenarios[i], &v.Scenarios[j]
			if a.Failed() || b.Failed() {
				continue
			}
			la, lb, mix, left := sameHostRounds(a.Levels, b.Levels)
			if len(mix) > 0 {
				mixed = append(mixed, MixedHostRounds{A: a.Name, B: b.Name, Rounds: mix, Left: left})
			}
			if upTo > 0 {
				la, lb = levelsUpTo(la, upTo, v.replicates), levelsUpTo(lb, upTo, v.replicates)
			}
			la, lb = v.perGPULevels(a, la), v.perGPULevels(b, lb)
			if v.Split() && base != nil && !base.Failed() && a != base && b != base && !sharesRound(la, lb) {
				bl := v.perGPULevels(base, base.Levels)
				if upTo > 0 {
					bl = levelsUpTo(bl, upTo, v.replicates)
				}
				la, lb = v.throughBaseline(la, bl), v.throughBaseline(lb, bl)
			}
			cs, own := compareLevels(la, lb, true, v.Confidence, v.Prior)
			if v.truth != nil {
				v.truth.apply(a.Name, b.Name, cs, v.Confidence)
			}
			if upTo == 0 && own != nil {
				v.noteNoise(a.Name, b.Name, own)
			}
			for _, c := range v.Levels {
				cmp, ok := cs[c]
				if !ok {
					continue
				}
				k := pairKey{i, j, c}
				ds := pairDoubts(a, b, c)
				if upTo > 0 {
					ds = pairDoubtsUpTo(a, b, c, func(r int) bool { return v.replicates.of(r) <= upTo })
				}
				if len(ds) > 0 {
					// Not a member of the family: never decided, never
					// looked at, and shown as doubted (doubt.go). A look
					// gets it among its pairs, doubted, to see whether
					// the doubt can ever clear (compareSequential).
					doubted(cmp, ds)
					if upTo == 0 {
						v.doubted[k] = cmp
					} else {
						pairs[k] = cmp
					}
					continue
				}
				pairs[k] = cmp
				family = append(family, k)
			}
		}
	}
	return pairs, family, mixed
}

// compareAll makes every comparison of the run: each pair of measured
// scenarios at each level they share, one family for the correction. The
// cells show each variant against the baseline; the rows' winners come from
// the leader's comparisons with every other scenario. Under a sequential
// plan the looks are replayed instead (sequential.go).
func compareAll(v *Verdict, plan *SequentialPlan) {
	if plan != nil {
		compareSequential(v, *plan)
		return
	}
	pairs, keys, mixed := comparePairs(v, 0)
	v.MixedHosts = mixed
	family := make([]*Comparison, 0, len(keys))
	for _, k := range keys {
		family = append(family, pairs[k])
	}
	// Deterministic family order: by pair, then level; then the capacities.
	family = append(family, v.Capacity.family()...)
	decide(family, fixedRule{Alpha: v.Alpha, Confidence: v.Confidence, Correction: v.Correction,
		MinEffectPct: v.MinEffectPct, EquivalenceMarginPct: v.EquivalenceMarginPct})
	v.Comparisons = len(family)
	v.CapacityComparisons = len(family) - len(keys)
	buildRows(v, pairs)
}

// buildRows fills the table from the run's decided comparisons: each
// variant's cell against the baseline and each row's winner.
func buildRows(v *Verdict, pairs map[pairKey]*Comparison) {
	for k, c := range v.doubted {
		pairs[k] = c
	}
	get := func(i, j int, c measure.Level) (Comparison, bool) { // j against i
		if i < j {
			cmp, ok := pairs[pairKey{i, j, c}]
			if !ok {
				return Comparison{}, false
			}
			return *cmp, true
		}
		cmp, ok := pairs[pairKey{j, i, c}]
		if !ok {
			return Comparison{}, false
		}
		return cmp.flip(), true
	}
	base := slices.IndexFunc(v.Scenarios, func(s Scenario) bool { return s.Name == v.Baseline })
	v.Rows = nil
	for _, c := range v.Levels {
		row := Row{Level: c}
		var present []int
		for i := range v.Scenarios {
			s := &v.Scenarios[i]
			cell := Cell{Scenario: s.Name}
			if l := s.Level(c); l != nil && l.Saturated {
				cell.Saturated = true
			} else if l != nil && l.measured() {
				present = append(present, i)
				cell.Present = true
				cell.Throughput = l.Throughput
				cell.ThroughputPerGPU, cell.PerGPU = l.ThroughputPerGPU, v.PerGPU
				if i != base {
					if cmp, ok := get(base, i, c); ok {
						cell.Compared = true
						cell.Comparison = cmp
						if bl := v.Scenarios[base].Level(c); cmp.Method == MethodLaunches && bl != nil &&
							(cmp.Rounds < l.Throughput.N || cmp.Rounds < bl.Throughput.N) {
							cell.PairedOnly = true
						}
					}
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		present, row.Doubted = undoubted(v, c, present)
		pickWinner(&row, present, func(i, j int) (Comparison, bool) { return get(i, j, c) })
		v.Rows = append(v.Rows, row)
	}
}

// undoubted splits the scenarios measured at level c into those the row
// can decide among and the names of those whose measurement is doubted.
func undoubted(v *Verdict, c measure.Level, present []int) (keep []int, doubted []string) {
	for _, i := range present {
		if l := v.Scenarios[i].Level(c); l != nil && len(l.Doubts) > 0 {
			doubted = append(doubted, v.Scenarios[i].Name)
			continue
		}
		keep = append(keep, i)
	}
	return keep, doubted
}

// pickWinner decides a row from the leader's comparisons (corrected, with
// their outcomes): the scenario with the highest throughput (per GPU when
// the comparisons are, Cell.rankOf) wins when it is
// faster than every other; the row is a tie when the leader ties with some
// and is faster than the rest (Tied names the top group); otherwise it is
// inconclusive, and Unresolved names the leader and every scenario it is
// not faster than.
func pickWinner(row *Row, present []int, get func(i, j int) (Comparison, bool)) {
	if len(present) < 2 {
		return
	}
	lead := present[0]
	for _, i := range present {
		if row.Cells[i].rankOf() > row.Cells[lead].rankOf() {
			lead = i
		}
	}
	name := row.Cells[lead].Scenario
	tied, unresolved := []string{name}, []string{name}
	open := false
	for _, i := range present {
		if i == lead {
			continue
		}
		cmp, ok := get(i, lead) // the leader against i
		switch {
		case ok && cmp.Outcome == OutcomeFaster:
		case ok && cmp.Outcome == OutcomeTie:
			tied = append(tied, row.Cells[i].Scenario)
			unresolved = append(unresolved, row.Cells[i].Scenario)
		default:
			open = true
			unresolved = append(unresolved, row.Cells[i].Scenario)
		}
	}
	switch {
	case open:
		row.Outcome, row.Unresolved = RowInconclusive, unresolved
	case len(tied) > 1:
		row.Outcome, row.Tied = RowTie, tied
	default:
		row.Outcome, row.Winner = RowWinner, name
	}
}
