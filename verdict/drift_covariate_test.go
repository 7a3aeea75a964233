package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// A study of a drift covariate in place of the serial widening: does a
// model of the drift, the difference of the two launches' positions in
// their round as a covariate of each round's paired log ratio, keep the
// rule's size and false-tie rate with more power than the widening? It is
// measured here, on the comparisons of comparison_size_test.go (one level
// of three tested alone at α, through the sequential rule's boundaries and
// tie test), and not shipped: docs/METHOD.md, "A drift covariate".
// BAKEOFF_COVARIATE_COMPARISONS=N runs N comparisons per figure (make
// covariate-study); without it the study is skipped.

// covariateDiff is level key's paired comparison of v against b with the
// launch-position covariate: each round's log ratio d = μ_level + β·x + e,
// x the variant's launch position minus the baseline's (in launches: ±1 in
// a two-scenario round), β one slope for every level (a drift moves a
// launch's levels together), fitted by least squares within levels. The
// residuals give the variance (N − levels − 1 df, made effective as the
// rule's pooled variance is) and their own serial
// inflation, which widen is applied to or not.
func covariateDiff(b, v []Level, key measure.Level, widen bool) (rule.Diff, bool) {
	ps := commonLevels(b, v)
	both := make([]Level, 0, 2*len(ps))
	for _, p := range ps {
		both = append(both, *p.a, *p.b)
	}
	rounds := roundIndex(both)
	orderRow := func(l *Level) []float64 {
		row := make([]float64, len(rounds))
		for i := range row {
			row[i] = math.NaN()
		}
		for _, ll := range l.Launches {
			row[rounds[ll.Round]] = float64(ll.Order)
		}
		return row
	}
	d := make([][]float64, len(ps))
	x := make([][]float64, len(ps))
	for i, p := range ps {
		ra, rb := launchRow(p.a, rounds), launchRow(p.b, rounds)
		oa, ob := orderRow(p.a), orderRow(p.b)
		d[i], x[i] = make([]float64, len(rounds)), make([]float64, len(rounds))
		for k := range d[i] {
			d[i][k], x[i][k] = rb[k]-ra[k], ob[k]-oa[k]
		}
	}
	type moments struct{ dm, xm float64 }
	ms := make([]moments, len(ps))
	var sxy, sxx float64
	cells, levels := 0, 0
	for i := range ps {
		var sd, sx float64
		n := 0
		for k := range d[i] {
			if !math.IsNaN(d[i][k]) {
				sd, sx, n = sd+d[i][k], sx+x[i][k], n+1
			}
		}
		if n == 0 {
			continue
		}
		ms[i] = moments{sd / float64(n), sx / float64(n)}
		for k := range d[i] {
			if !math.IsNaN(d[i][k]) {
				sxy += (x[i][k] - ms[i].xm) * (d[i][k] - ms[i].dm)
				sxx += (x[i][k] - ms[i].xm) * (x[i][k] - ms[i].xm)
			}
		}
		cells, levels = cells+n, levels+1
	}
	var beta float64
	params := levels
	if sxx > 0 {
		beta, params = sxy/sxx, levels+1
	}
	df := cells - params
	if df <= 0 {
		return rule.Diff{}, false
	}
	resid := make([][]float64, len(ps))
	var ss float64
	for i := range ps {
		resid[i] = make([]float64, len(d[i]))
		for k := range d[i] {
			resid[i][k] = math.NaN()
			if !math.IsNaN(d[i][k]) {
				e := d[i][k] - ms[i].dm - beta*(x[i][k]-ms[i].xm)
				resid[i][k] = e
				ss += e * e
			}
		}
	}
	// The levels of a launch move together, so their cells are not as many
	// independent ones: the df are the residuals' effective df as the rule
	// pools them (rule.PooledVar), less the slope's share.
	pv := rule.PooledVar(resid)
	if pv.DF <= 0 {
		return rule.Diff{}, false
	}
	s2 := ss / float64(df)
	effDF := pv.DF * float64(df) / float64(cells-levels)
	for i, p := range ps {
		if p.c != key {
			continue
		}
		_, n := rule.RowMean(d[i])
		v := s2 / float64(n)
		if sxx > 0 {
			v += s2 * ms[i].xm * ms[i].xm / sxx
		}
		e := rule.Diff{D: ms[i].dm - beta*ms[i].xm, SE: math.Sqrt(v), DF: effDF}
		if widen {
			e = e.Widened(rule.SerialInflation(resid))
		}
		return e, true
	}
	return rule.Diff{}, false
}

// covariateRule is one way of estimating a comparison, as the study lists it.
type covariateRule struct {
	name string
	est  func(b, v []Level, key measure.Level) (rule.Diff, bool)
}

var covariateRules = []covariateRule{
	{"plain", func(b, v []Level, key measure.Level) (rule.Diff, bool) {
		cs, _ := compareLevels(b, v, true, DefaultConfidence, nil)
		c, ok := cs[key]
		if !ok {
			return rule.Diff{}, false
		}
		return c.est, true
	}},
	{"widened (shipped)", func(b, v []Level, key measure.Level) (rule.Diff, bool) {
		cs, _ := compareLevels(b, v, true, DefaultConfidence, nil)
		c, ok := cs[key]
		if !ok {
			return rule.Diff{}, false
		}
		return sequentialView(c).est, true
	}},
	{"covariate", func(b, v []Level, key measure.Level) (rule.Diff, bool) { return covariateDiff(b, v, key, false) }},
	{"covariate, widened", func(b, v []Level, key measure.Level) (rule.Diff, bool) { return covariateDiff(b, v, key, true) }},
}

// covariateRates runs n comparisons of true log ratio delta through each
// rule, the same campaigns for all, each closing at its first look that
// ties or calls it (a tie first, as compareSequential decides).
func covariateRates(plan SequentialPlan, nz sizeNoise, n int, seed uint64, delta float64) []sizeTally {
	plan = plan.Normalised()
	const alpha = 0.05
	lo, hi := rule.TieBounds(DefaultEquivalenceMarginPct)
	rng := rand.New(rand.NewPCG(seed, 0xc0c0))
	key := measure.ConcurrencyLevel(1)
	out := make([]sizeTally, len(covariateRules))
	for range n {
		b, v := simComparison(rng, nz, plan.MaxRounds, delta)
		open := make([]bool, len(covariateRules))
		for i := range open {
			open[i] = true
		}
		var looks []float64
		for k := plan.MinRounds; k <= plan.MaxRounds; k++ {
			looks = append(looks, float64(k)/float64(plan.MaxRounds))
			bk, vk := levelsUpTo(b, k, nil), levelsUpTo(v, k, nil)
			for i, r := range covariateRules {
				if !open[i] {
					continue
				}
				e, ok := r.est(bk, vk, key)
				if !ok {
					continue
				}
				switch {
				case plan.Ties(e, looks, alpha, lo, hi):
					out[i].ties++
					open[i] = false
				case plan.Rejects(e, looks, alpha):
					out[i].called++
					open[i] = false
				}
			}
		}
		for i := range out {
			out[i].n++
		}
	}
	return out
}

// TestCovariateEstimate: on a campaign with a linear drift and nothing
// else, the covariate's slope takes the drift out entirely (the estimate
// is the true ratio, its error nothing), where the plain paired estimate
// carries the drift as round-to-round variance.
func TestCovariateEstimate(t *testing.T) {
	nz := sizeNoise{name: "linear drift only", driftPer: 0.01}
	rng := rand.New(rand.NewPCG(1, 2))
	b, v := simComparison(rng, nz, 6, 0.03)
	key := measure.ConcurrencyLevel(1)
	e, ok := covariateDiff(b, v, key, false)
	if !ok {
		t.Fatal("no estimate")
	}
	if math.Abs(e.D-0.03) > 1e-9 || e.SE > 1e-9 {
		t.Errorf("covariate estimate %+v, want D 0.03 and SE 0", e)
	}
	cs, _ := compareLevels(b, v, true, DefaultConfidence, nil)
	if p := cs[key].est; p.SE < 0.003 {
		t.Errorf("plain paired estimate %+v: want the drift in its error", p)
	}
}

// TestCovariateStudy measures size, false ties and power of each rule over
// sizeCases (BAKEOFF_COVARIATE_COMPARISONS comparisons a figure).
func TestCovariateStudy(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BAKEOFF_COVARIATE_COMPARISONS"))
	if n <= 0 {
		t.Skip("a study: BAKEOFF_COVARIATE_COMPARISONS=N (make covariate-study)")
	}
	plan := SequentialPlan{MinRounds: 3, MaxRounds: 12}
	bound := binomialBound(n, 0.05)
	margin := math.Log1p(DefaultEquivalenceMarginPct / 100)
	for i, nz := range sizeCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			aa := covariateRates(plan, nz, n, 9000+uint64(i), 0)
			up := covariateRates(plan, nz, n, 9100+uint64(i), margin)
			down := covariateRates(plan, nz, n, 9200+uint64(i), math.Log1p(-DefaultEquivalenceMarginPct/100))
			far := covariateRates(plan, nz, n, 9300+uint64(i), math.Log1p(0.04))
			t.Logf("%s (%d comparisons a figure, bound on a 5%% rate %d):", nz.name, n, bound)
			for k, r := range covariateRules {
				t.Logf("| %s | %s | %.2f%% | %.2f%% | %.2f%% / %.2f%% | %.1f%% / %.1f%% | %.1f%% |", nz.name, r.name,
					100*aa[k].calledRate(), 100*aa[k].tieRate(),
					100*up[k].tieRate(), 100*down[k].tieRate(),
					100*up[k].calledRate(), 100*down[k].calledRate(), 100*far[k].calledRate())
			}
		})
	}
}
