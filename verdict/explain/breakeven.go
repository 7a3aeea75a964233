package explain

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// breakEven finds variant name's break-even against the baseline from the
// verdict's corrected outcomes (which decide whether there is one) and the
// per-round log ratios (which place it). levels are the compared levels in
// ascending order, cells their comparisons.
func breakEven(v *verdict.Verdict, name, engineName string, levels []measure.Level, cells []verdict.Cell) *verdict.BreakEven {
	var won, lost []int
	for i, c := range cells {
		switch c.Outcome {
		case verdict.OutcomeFaster:
			won = append(won, i)
		case verdict.OutcomeSlower:
			lost = append(lost, i)
		}
	}
	be := &verdict.BreakEven{Kind: verdict.BreakEvenNone}
	switch {
	case len(won) == 0 && len(lost) == 0:
		be.Sentence = "no break-even: no level won or lost"
		return be
	case len(lost) == 0:
		w := levels[won[len(won)-1]]
		be.Kind, be.Pays, be.From = verdict.BreakEvenAbove, "below", w
		be.Sentence = fmt.Sprintf("pays at least up to %s, the last level it wins; no level lost, so no break-even inside the levels", measure.LevelName(w))
		return be
	case len(won) == 0:
		l := levels[lost[0]]
		be.Kind, be.Pays, be.From = verdict.BreakEvenBelow, "below", l
		be.Sentence = fmt.Sprintf("never pays from %s on; no level won, so no break-even inside the levels", measure.LevelName(l))
		return be
	}
	// One turn: every win before every loss (pays below) or after (above).
	var from, to, sign int
	switch {
	case won[len(won)-1] < lost[0]:
		from, to, sign = won[len(won)-1], lost[0], 1
		be.Pays = "below"
	case lost[len(lost)-1] < won[0]:
		from, to, sign = lost[len(lost)-1], won[0], -1
		be.Pays = "above"
	default:
		be.Sentence = "no break-even: the wins and losses alternate across the levels"
		return be
	}
	base, variant := v.Scenario(v.Baseline), v.Scenario(name)
	ratios := make([][]float64, 0, to-from+1) // per level: each round's log ratio
	shift := v.GPUShift(base, variant)        // per GPU, when the comparisons are
	for i := from; i <= to; i++ {
		r := roundRatios(base.Level(levels[i]), variant.Level(levels[i]))
		for k := range r {
			r[k] -= shift
		}
		ratios = append(ratios, r)
	}
	x := make([]float64, to-from+1)
	for i := range x {
		x[i] = math.Log(measure.LevelValue(levels[from+i]))
	}
	est, lo, hi, rounds, ok := crossing(x, ratios, sign, v.Confidence)
	be.From, be.To = levels[from], levels[to]
	if !ok {
		be.Sentence = fmt.Sprintf("no break-even: the launches do not place the crossing between %s and %s (fewer than two paired rounds)",
			measure.LevelName(be.From), measure.LevelName(be.To))
		return be
	}
	be.Kind, be.Confidence, be.Rounds = verdict.BreakEvenCrosses, v.Confidence, rounds
	be.Load, be.Lo, be.Hi = math.Exp(est), math.Exp(lo), math.Exp(hi)
	be.Batch = batchAt(variant, levels[from:to+1], be.Load, be.Lo, be.Hi)
	if be.Pays == "below" && be.Batch != nil {
		be.Suggestion = suggest(engineName, be.Batch)
	}
	be.Sentence = breakEvenSentence(be)
	return be
}

// roundRatios are level lv's log throughput ratios against lb, one per
// round both launched in on the same host (or hosts not recorded), indexed
// by round − 1, NaN for a round without a pair.
func roundRatios(lb, lv *verdict.Level) []float64 {
	if lb == nil || lv == nil {
		return nil
	}
	var out []float64
	for _, a := range lb.Launches {
		for _, b := range lv.Launches {
			if a.Round != b.Round || a.Throughput <= 0 || b.Throughput <= 0 || (a.Host != "" && b.Host != "" && a.Host != b.Host) {
				continue
			}
			for len(out) < a.Round {
				out = append(out, math.NaN())
			}
			out[a.Round-1] = math.Log(b.Throughput / a.Throughput)
		}
	}
	return out
}

// crossing places the first zero of the piecewise-linear interpolation of
// the mean log ratios d over x (log loads, ascending), going from sign to
// −sign, and its interval: every x between the first and last level where a
// paired t-test of the interpolated log ratio (per round, the same weights
// on that round's two levels; n − 1 df) does not reject 0 at conf: the
// inversion of the test (Fieller's interval for the ratio that places the
// zero). ok is false when some segment has fewer than two paired rounds.
func crossing(x []float64, d [][]float64, sign int, conf float64) (est, lo, hi float64, rounds int, ok bool) {
	est, lo, hi = math.NaN(), math.Inf(1), math.Inf(-1)
	rounds = math.MaxInt
	s := float64(sign)
	for j := 0; j+1 < len(x); j++ {
		a, b := pairedRounds(d[j], d[j+1])
		n := len(a)
		if n < 2 {
			return 0, 0, 0, 0, false
		}
		rounds = min(rounds, n)
		ma, mb := meanOf(a), meanOf(b)
		if math.IsNaN(est) && s*ma > 0 && s*mb <= 0 {
			est = x[j] + (x[j+1]-x[j])*ma/(ma-mb)
		}
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-conf)/2)
		for _, w := range acceptedW(a, b, t) {
			xw := x[j] + w*(x[j+1]-x[j])
			lo, hi = math.Min(lo, xw), math.Max(hi, xw)
		}
	}
	if math.IsNaN(est) {
		// The verdict's outcomes bracket a crossing the means always show
		// (a win has a positive mean, a loss a negative one); nothing else
		// reaches here.
		return 0, 0, 0, 0, false
	}
	return est, math.Min(lo, est), math.Max(hi, est), rounds, true
}

// acceptedW are the ends of the parts of [0, 1] where the per-round
// combination (1−w)·a + w·b has a mean that a t-test with critical value t
// does not tell from 0: the roots of a quadratic in w, and 0 or 1 where
// they are accepted.
func acceptedW(a, b []float64, t float64) []float64 {
	n := float64(len(a))
	ma, mb := meanOf(a), meanOf(b)
	saa, sbb, sab := sampleCov(a, a), sampleCov(b, b), sampleCov(a, b)
	k := t * t / n
	dm := mb - ma
	// f(w) = (ma + w·dm)² − k·Var((1−w)a + w·b) ≤ 0: accepted.
	qa := dm*dm - k*(saa-2*sab+sbb)
	qb := 2*ma*dm - k*(2*sab-2*saa)
	qc := ma*ma - k*saa
	f := func(w float64) float64 { return qa*w*w + qb*w + qc }
	cuts := []float64{0, 1}
	if disc := qb*qb - 4*qa*qc; qa != 0 && disc >= 0 {
		r := math.Sqrt(disc)
		for _, w := range []float64{(-qb - r) / (2 * qa), (-qb + r) / (2 * qa)} {
			if w > 0 && w < 1 {
				cuts = append(cuts, w)
			}
		}
	} else if qa == 0 && qb != 0 {
		if w := -qc / qb; w > 0 && w < 1 {
			cuts = append(cuts, w)
		}
	}
	slices.Sort(cuts)
	var out []float64
	for i := 0; i+1 < len(cuts); i++ {
		if f((cuts[i]+cuts[i+1])/2) <= 0 {
			out = append(out, cuts[i], cuts[i+1])
		}
	}
	return out
}

// pairedRounds are the rounds both a and b have, as two slices.
func pairedRounds(a, b []float64) (x, y []float64) {
	for r := 0; r < min(len(a), len(b)); r++ {
		if !math.IsNaN(a[r]) && !math.IsNaN(b[r]) {
			x, y = append(x, a[r]), append(y, b[r])
		}
	}
	return x, y
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// sampleCov is the sample covariance of x and y (n − 1 in the denominator).
func sampleCov(x, y []float64) float64 {
	mx, my := meanOf(x), meanOf(y)
	var s float64
	for i := range x {
		s += (x[i] - mx) * (y[i] - my)
	}
	return s / float64(len(x)-1)
}

// batchAt is the variant's running batch at loads, interpolated in log-log
// between the levels around each (the server's mean over the steady
// window); for a closed loop without a timeline, the concurrency itself,
// which the batch follows up to the server's limit.
func batchAt(s *verdict.Scenario, levels []measure.Level, loads ...float64) *verdict.BatchAt {
	var xs, ys []float64
	source := "the server's running requests (mean over each level's steady window), interpolated in log-log"
	for _, c := range levels {
		if l := s.Level(c); l != nil && l.Server != nil && l.Server.Running != nil && l.Server.Running.Mean > 0 {
			xs, ys = append(xs, math.Log(measure.LevelValue(c))), append(ys, math.Log(l.Server.Running.Mean))
		}
	}
	if len(xs) < 2 {
		if measure.IsRate(levels[0]) {
			return nil
		}
		return &verdict.BatchAt{Center: loads[0], Lo: loads[1], Hi: loads[2], Source: "the concurrency (no server timeline)"}
	}
	at := func(load float64) float64 {
		lx := math.Log(load)
		for i := 0; i+1 < len(xs); i++ {
			if lx <= xs[i+1] || i+2 == len(xs) {
				w := (lx - xs[i]) / (xs[i+1] - xs[i])
				return math.Exp(ys[i] + w*(ys[i+1]-ys[i]))
			}
		}
		return math.Exp(ys[0])
	}
	return &verdict.BatchAt{Center: at(loads[0]), Lo: at(loads[1]), Hi: at(loads[2]), Source: source}
}

// suggest is the engine's setting that stops speculating above the batch
// at the break-even: the largest whole batch at or under it.
func suggest(engineName string, b *verdict.BatchAt) *verdict.Suggestion {
	p := engine.Lookup(engineName)
	if p == nil || p.SpecOff == nil {
		return nil
	}
	k := p.SpecOff
	n := max(int(math.Floor(b.Center)), k.Min)
	return &verdict.Suggestion{Engine: engineName, Key: k.Key, Value: n,
		Lo: max(int(math.Floor(b.Lo)), k.Min), Hi: max(int(math.Floor(b.Hi)), k.Min),
		Setting: k.Setting(n), Since: k.Since}
}

// dropBatch leaves out the running batch at the break-even and the setting
// it suggests, and says the rest again.
func dropBatch(be *verdict.BreakEven) {
	if be.Batch == nil && be.Suggestion == nil {
		return
	}
	be.Batch, be.Suggestion = nil, nil
	be.Sentence = breakEvenSentence(be)
}

func breakEvenSentence(be *verdict.BreakEven) string {
	unit := be.From
	s := fmt.Sprintf("pays %s %s [%s, %s] (%.0f%%, %d rounds, between %s and %s)", be.Pays,
		loadText(unit, be.Load, true), loadText(unit, be.Lo, false), loadText(unit, be.Hi, false),
		100*be.Confidence, be.Rounds, measure.LevelName(be.From), measure.LevelName(be.To))
	if be.Batch != nil && !measure.IsRate(unit) && be.Batch.Source != "the concurrency (no server timeline)" {
		s += fmt.Sprintf("; the server ran %.1f requests there [%.1f, %.1f]", be.Batch.Center, be.Batch.Lo, be.Batch.Hi)
	}
	if g := be.Suggestion; g != nil {
		s += fmt.Sprintf("; suggested: %s (%s %d, interval %d to %d), a measured suggestion, not a tested setting", g.Setting, g.Key, g.Value, g.Lo, g.Hi)
	}
	return s
}

// loadText writes a load in the unit of level l: "C≈2.3" (approx) or
// "2.3", "1.5 req/s".
func loadText(l measure.Level, x float64, approx bool) string {
	v := fmt.Sprintf("%.3g", x)
	switch {
	case measure.IsSpeed(l):
		return v + "×"
	case measure.IsRate(l):
		return v + " req/s"
	case approx:
		return "C≈" + v
	}
	return v
}

// scenarioEngines maps each scenario to its engine, from the campaign the
// manifest recorded as resolved; empty when it recorded none.
func scenarioEngines(m results.Manifest) map[string]string {
	out := map[string]string{}
	if m.Resolved == nil {
		return out
	}
	data, err := json.Marshal(m.Resolved)
	if err != nil {
		return out
	}
	var c struct {
		Scenarios []struct{ Name, Engine string }
	}
	if json.Unmarshal(data, &c) != nil {
		return out
	}
	for _, s := range c.Scenarios {
		out[s.Name] = s.Engine
	}
	return out
}
