package verdict

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/slo"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// The capacity under the campaign's service-level objective (package slo):
// per launch, whether each level met the objective, its goodput, and the
// highest load meeting it (slo.Capacity, interpolated between levels); per
// scenario, the geometric mean of its launches' capacities with a t
// interval across launches; per variant, a comparison with the baseline
// paired by round on the log capacities, decided by the same rule as the
// throughput comparisons and in the same corrected family.

// CapacityVerdict is everything the verdict says under the objective.
type CapacityVerdict struct {
	SLO slo.SLO `json:"slo"`
	// Objective is the objective as the sentences write it, e.g.
	// "ttft_p99 ≤ 2s and tpot_p99 ≤ 60ms".
	Objective string `json:"objective"`
	// Unit is the unit of every capacity: "concurrent users" for a
	// concurrency sweep, "req/s" for a sweep of request rates.
	Unit string `json:"unit"`
	// Scenarios hold one capacity per measured scenario, in campaign order.
	Scenarios []ScenarioCapacity `json:"scenarios"`
	// Comparisons hold one line per variant against the baseline, in
	// campaign order.
	Comparisons []CapacityComparison `json:"comparisons"`
	// PerGPU is the verdict's (Verdict.PerGPU): the scenarios hold
	// different numbers of GPUs, so the sentences show each capacity per
	// GPU beside it. The comparisons stay of each deployment's whole
	// capacity, the load it sustains (docs/METHOD.md, "Per GPU").
	PerGPU bool `json:"per_gpu,omitempty"`
}

// ScenarioCapacity is one scenario's capacity under the objective.
type ScenarioCapacity struct {
	Scenario string `json:"scenario"`
	// Capacity is the geometric mean of the launches' capacities with its
	// interval across launches (Student's t, launches−1 df); Lo = Hi =
	// Center with one launch, whose variation is then not measured.
	Capacity Estimate `json:"capacity"`
	// Bound is slo.Above when some launch met the objective at every level
	// (its capacity counted as the top level's load, so Capacity.Center is
	// a lower bound), slo.Below when some launch missed it at the lowest
	// level (an upper bound), "both" when launches did each.
	Bound slo.Bound `json:"bound,omitempty"`
	// Text is the capacity as the sentence writes it: "61 [55, 66]",
	// ">250", "<1", "61 (one launch)".
	Text     string           `json:"text"`
	Launches []LaunchCapacity `json:"launches"`
	// GPUs is the scenario's (Scenario.GPUs); 0 when not known.
	GPUs int `json:"gpus,omitempty"`
	// PerGPU is Capacity over GPUs, the load each GPU carries: users (or
	// requests per second) per GPU, what sizes a fleet of deployments of
	// different sizes. PerGPUText writes it as Text writes the capacity,
	// with " per GPU" after it ("7.6 [6.9, 8.3] per GPU", ">3.8 per GPU").
	// Both absent when GPUs is not known.
	PerGPU     *Estimate `json:"capacity_per_gpu,omitempty"`
	PerGPUText string    `json:"text_per_gpu,omitempty"`
}

// BoundBoth: some launches met the objective at every level and others
// missed it at the lowest.
const BoundBoth slo.Bound = "both"

// LaunchCapacity is one launch's capacity.
type LaunchCapacity struct {
	Round int `json:"round"`
	// Host is the host the launch ran on; empty when the results do not say.
	Host     string    `json:"host,omitempty"`
	Capacity float64   `json:"capacity"`
	Bound    slo.Bound `json:"bound,omitempty"`
	// Binding is the metric that limits the capacity (slo.Capacity); empty
	// when every level met the objective.
	Binding string `json:"binding,omitempty"`
}

// CapacityComparison is a variant's capacity against the baseline's.
type CapacityComparison struct {
	Variant string `json:"variant"`
	// Comparison is the variant's capacity over the baseline's: paired by
	// round, with the variance of the rounds' log ratios (launches−1 df).
	Comparison
	// Winner is the scenario with the larger capacity when the outcome is
	// faster or slower; empty otherwise.
	Winner string `json:"winner,omitempty"`
	// Censored is set when a launch of either side was only a bound (above
	// the top level or under the lowest): the bound's side then counts at
	// the edge, no tie is called, and a winner only when the bounds can
	// only widen its lead.
	Censored bool `json:"censored,omitempty"`
	// Sentence is the whole line, e.g. "under ttft_p99 ≤ 2s and tpot_p99 ≤
	// 60ms, baseline serves 61 concurrent users [55, 66], eagle3-topk4 24
	// [21, 27]: baseline wins (−61%, p<0.001)".
	Sentence string `json:"sentence"`
}

// LevelSLO is one level of one scenario measured against the objective.
type LevelSLO struct {
	// Goodput is the mean over launches of the requests per second that
	// completed in the steady-state window and met every bound.
	Goodput float64 `json:"goodput"`
	// GoodputPerGPU is Goodput over the scenario's GPUs; 0 when they are
	// not known.
	GoodputPerGPU float64 `json:"goodput_per_gpu,omitempty"`
	// Meets counts the launches whose level met the objective, of Launches.
	Meets    int         `json:"meets"`
	Launches []LaunchSLO `json:"launches"`
}

// LaunchSLO is one launch's level against the objective.
type LaunchSLO struct {
	Round int `json:"round"`
	slo.Result
}

// levelLoad is a level's load as a number: the concurrency, or an open-loop
// level's rate in requests per second.
func levelLoad(c measure.Level) float64 { return measure.LevelValue(c) }

// loadUnit names the unit of the levels' load: a campaign sweeps one kind.
func loadUnit(levels []measure.Level) string {
	for _, c := range levels {
		if measure.IsSpeed(c) {
			return "× the trace's pace"
		}
		if measure.IsRate(c) {
			return "req/s"
		}
	}
	return "concurrent users"
}

// Saturated is the metric a Result misses when the launch's server could
// not keep up with an open-loop level's arrivals: its latencies grow with
// the level's length, so no p99 of it means anything, and the level misses
// the objective whatever they were.
const Saturated = "saturated"

// measureSLO evaluates every launch's levels against the objective and
// computes each scenario's capacity; nil without an objective.
func measureSLO(v *Verdict, in records.Input, maxSlices int) *CapacityVerdict {
	if in.Manifest.SLO == nil || !in.Manifest.SLO.Set() {
		return nil
	}
	o := *in.Manifest.SLO
	cv := &CapacityVerdict{SLO: o, Objective: o.String(), Unit: loadUnit(v.Levels), PerGPU: v.PerGPU}
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		if s.Failed() {
			continue
		}
		sc := ScenarioCapacity{Scenario: s.Name}
		for _, l := range in.Launches[s.Name] {
			var points []slo.Point
			groups := records.ByLevel(l.Records)
			for _, c := range slices.SortedFunc(maps.Keys(groups), measure.Level.Compare) {
				reps := groups[c]
				var recs [][]measure.Record
				var windows []measure.Window
				for _, id := range slices.Sorted(maps.Keys(reps)) {
					recs = append(recs, reps[id])
					windows = append(windows, measure.LevelThroughput(reps[id], c, maxSlices).Window)
				}
				res := o.Evaluate(recs, windows)
				if measure.IsRate(c) {
					for _, rs := range recs {
						if measure.SaturationOf(rs).Saturated {
							res.Margins[Saturated] = math.Inf(-1)
							res.Margin, res.Binding, res.Meets = slo.Margin(math.Inf(-1)), Saturated, false
						}
					}
				}
				if lv := s.Level(c); lv != nil {
					if lv.SLO == nil {
						lv.SLO = &LevelSLO{}
					}
					lv.SLO.Launches = append(lv.SLO.Launches, LaunchSLO{Round: l.Round, Result: res})
				}
				points = append(points, slo.Point{Load: levelLoad(c), Margins: res.Margins})
			}
			load, b, binding, ok := slo.Capacity(points)
			if !ok {
				continue
			}
			lc := LaunchCapacity{Round: l.Round, Host: l.Host, Capacity: load, Bound: b, Binding: binding}
			sc.Launches = append(sc.Launches, lc)
		}
		for j := range s.Levels {
			if ls := s.Levels[j].SLO; ls != nil {
				for _, r := range ls.Launches {
					ls.Goodput += r.Goodput / float64(len(ls.Launches))
					if r.Meets {
						ls.Meets++
					}
				}
				if s.GPUs > 0 {
					ls.GoodputPerGPU = ls.Goodput / float64(s.GPUs)
				}
			}
		}
		if len(sc.Launches) == 0 {
			continue
		}
		sc.Capacity, sc.Bound = capacityEstimate(sc.Launches, v.Confidence)
		sc.Text = capacityText(sc, "")
		sc.setPerGPU(s.GPUs)
		cv.Scenarios = append(cv.Scenarios, sc)
	}
	for _, s := range cv.Scenarios {
		if s.Scenario != v.Baseline && cv.scenario(v.Baseline) != nil {
			cv.Comparisons = append(cv.Comparisons, CapacityComparison{Variant: s.Scenario})
		}
	}
	cv.compare(v.Baseline, v.Confidence)
	return cv
}

// setPerGPU sets the capacity per GPU of a scenario holding gpus (none
// when 0). The division moves the center, the interval and every launch's
// capacity alike: a bound stays a bound of the same kind.
func (sc *ScenarioCapacity) setPerGPU(gpus int) {
	if gpus <= 0 {
		return
	}
	d := sc.Over(float64(gpus))
	text := capacityText(*d, "")
	// What the whole capacity's text says of its launches holds for it.
	text = strings.TrimSuffix(strings.TrimSuffix(text, " (one launch)"), " (the launches disagree)")
	sc.GPUs, sc.PerGPU, sc.PerGPUText = gpus, &d.Capacity, text+" per GPU"
}

// Over is a copy of sc with its capacity and every launch's divided by g.
func (sc *ScenarioCapacity) Over(g float64) *ScenarioCapacity {
	d := *sc
	d.Capacity = sc.Capacity.Over(g)
	d.Launches = make([]LaunchCapacity, len(sc.Launches))
	for i, l := range sc.Launches {
		l.Capacity /= g
		d.Launches[i] = l
	}
	return &d
}

// capacityEstimate is the geometric mean of the launches' capacities with
// its t interval across launches, and the bound they make together.
func capacityEstimate(ls []LaunchCapacity, conf float64) (Estimate, slo.Bound) {
	logs := make([]float64, len(ls))
	var b slo.Bound
	for i, l := range ls {
		logs[i] = math.Log(l.Capacity)
		switch {
		case l.Bound == slo.Exact:
		case b == slo.Exact || b == l.Bound:
			b = l.Bound
		default:
			b = BoundBoth
		}
	}
	e := meanLogs(logs)
	lo, hi := e.Interval(conf)
	est := Estimate{Center: math.Exp(e.D), Lo: math.Exp(lo), Hi: math.Exp(hi), Confidence: conf, N: len(ls)}
	if !e.OK() {
		est.Lo, est.Hi = est.Center, est.Center
	}
	if same := slicesAllEqual(ls); same {
		// Every launch at one edge: the edge itself, not exp(log(edge)).
		est.Center, est.Lo, est.Hi = ls[0].Capacity, ls[0].Capacity, ls[0].Capacity
	}
	return est, b
}

func slicesAllEqual(ls []LaunchCapacity) bool {
	for _, l := range ls {
		if l.Capacity != ls[0].Capacity {
			return false
		}
	}
	return true
}

// meanLogs is the mean of xs with its standard error and n−1 df.
func meanLogs(xs []float64) rule.Diff {
	var s float64
	for _, x := range xs {
		s += x
	}
	n := len(xs)
	if n == 0 {
		return rule.Diff{}
	}
	e := rule.Diff{D: s / float64(n)}
	if n < 2 {
		return e
	}
	var ss float64
	for _, x := range xs {
		ss += (x - e.D) * (x - e.D)
	}
	e.SE, e.DF = math.Sqrt(ss/float64(n-1)/float64(n)), float64(n-1)
	return e
}

// compare fills each variant's comparison with the baseline, paired by
// round (a round whose two launches ran on different hosts is left out, as
// for the throughput): its outcome comes later, from decide over the whole
// family.
func (cv *CapacityVerdict) compare(baseline string, conf float64) {
	base := cv.scenario(baseline)
	for i := range cv.Comparisons {
		cc := &cv.Comparisons[i]
		s := cv.scenario(cc.Variant)
		if base == nil || s == nil {
			continue
		}
		var d []float64
		for _, lv := range s.Launches {
			for _, lb := range base.Launches {
				if lv.Round == lb.Round && (lv.Host == "" || lb.Host == "" || lv.Host == lb.Host) {
					d = append(d, math.Log(lv.Capacity)-math.Log(lb.Capacity))
				}
			}
		}
		e := meanLogs(d)
		sd := math.NaN()
		if e.OK() {
			sd = e.SE * math.Sqrt(float64(len(d)))
		}
		cc.Comparison = newComparison(e, MethodLaunches, len(d), sd, conf)
		if len(d) < 2 {
			cc.Method = MethodWithinLaunch
		}
		cc.Censored = base.Bound != slo.Exact || s.Bound != slo.Exact
	}
}

func (cv *CapacityVerdict) scenario(name string) *ScenarioCapacity {
	for i := range cv.Scenarios {
		if cv.Scenarios[i].Scenario == name {
			return &cv.Scenarios[i]
		}
	}
	return nil
}

// family is the comparisons that join the run's corrected family: those
// with an error estimate (one launch a side can never be significant, and
// would only cost the others power).
func (cv *CapacityVerdict) family() []*Comparison {
	if cv == nil {
		return nil
	}
	var out []*Comparison
	for i := range cv.Comparisons {
		if cv.Comparisons[i].est.OK() {
			out = append(out, &cv.Comparisons[i].Comparison)
		}
	}
	return out
}

// finish settles each comparison once decide has given it its outcome:
// censored capacities call no tie and a winner only when the bounds can
// only widen its lead; then the sentence.
func (cv *CapacityVerdict) finish(v *Verdict) {
	if cv == nil {
		return
	}
	base := cv.scenario(v.Baseline)
	for i := range cv.Comparisons {
		cc := &cv.Comparisons[i]
		if v.Sequential == nil {
			// A sequential look settled it on the launches it had.
			SettleCapacity(&cc.Comparison, base, cv.scenario(cc.Variant))
		}
		switch cc.Outcome {
		case OutcomeFaster:
			cc.Winner = cc.Variant
		case OutcomeSlower:
			cc.Winner = v.Baseline
		}
		cc.Sentence = cv.sentence(v.Baseline, v.EquivalenceMarginPct, *cc)
	}
}

// widens reports whether the bounds of the larger and the smaller side can
// only make the difference larger: the larger side's launches can only be
// higher still (Above), the smaller's only lower (Below).
func widens(larger, smaller slo.Bound) bool {
	return (larger == slo.Exact || larger == slo.Above) && (smaller == slo.Exact || smaller == slo.Below)
}

// sentence is the verdict's line for one variant.
func (cv *CapacityVerdict) sentence(baseline string, marginPct float64, cc CapacityComparison) string {
	b, s := cv.scenario(baseline), cv.scenario(cc.Variant)
	head := fmt.Sprintf("under %s, %s serves %s%s, %s %s%s", cv.Objective, baseline, capacityText(*b, cv.Unit), cv.perGPUAside(b),
		cc.Variant, s.Text, cv.perGPUAside(s))
	var tail string
	switch cc.Outcome {
	case OutcomeFaster, OutcomeSlower:
		tail = fmt.Sprintf("%s wins (%s, %s)", cc.Winner, Pct(cc.DeltaPct), PClause(cc.PAdjusted))
	case OutcomeTie:
		tail = fmt.Sprintf("tie (%s, within ±%s)", Pct(cc.DeltaPct), strconv.FormatFloat(marginPct, 'f', -1, 64)+"%")
	default:
		switch {
		case cc.Method == MethodWithinLaunch:
			tail = "inconclusive (one launch each: launch-to-launch variation is not measured)"
		case cc.Censored && cc.Significant:
			tail = fmt.Sprintf("inconclusive (%s, but a capacity beyond the levels measured could close the gap)", Pct(cc.DeltaPct))
		case cc.Censored:
			tail = fmt.Sprintf("inconclusive (%s; a capacity beyond the levels measured is only a bound)", Pct(cc.DeltaPct))
		default:
			tail = fmt.Sprintf("inconclusive (%s, %s)", Pct(cc.DeltaPct), cc.MDEClause())
		}
	}
	return head + ": " + tail
}

// perGPUAside is " (7.6 [6.9, 8.3] per GPU on 8 GPUs)" after a capacity in
// a sentence when the run is compared per GPU; empty otherwise.
func (cv *CapacityVerdict) perGPUAside(s *ScenarioCapacity) string {
	if !cv.PerGPU || s.PerGPUText == "" {
		return ""
	}
	return " (" + PerGPUAside(s) + ")"
}

// PerGPUAside is a capacity per GPU and the GPUs it is of: "7.6 [6.9,
// 8.3] per GPU on 8 GPUs"; empty when the scenario's GPUs are not known.
func PerGPUAside(s *ScenarioCapacity) string {
	if s.PerGPUText == "" {
		return ""
	}
	return s.PerGPUText + " on " + GPUsText(s.GPUs)
}

// capacityText is the capacity as the sentence writes it, with the unit
// after the number when unit is not empty: "61 concurrent users [55, 66]",
// ">250", "<1", "61 (one launch)".
func capacityText(s ScenarioCapacity, unit string) string {
	e := s.Capacity
	u := ""
	if unit != "" {
		u = " " + unit
	}
	switch s.Bound {
	case slo.Above:
		return ">" + FormatLoad(e.Center) + u
	case slo.Below:
		return "<" + FormatLoad(e.Center) + u
	case BoundBoth:
		lo, hi := math.Inf(1), 0.0
		for _, l := range s.Launches {
			lo, hi = math.Min(lo, l.Capacity), math.Max(hi, l.Capacity)
		}
		return fmt.Sprintf("<%s to >%s%s (the launches disagree)", FormatLoad(lo), FormatLoad(hi), u)
	}
	if e.N < 2 {
		return FormatLoad(e.Center) + u + " (one launch)"
	}
	c, lo, hi := formatInterval(e.Center, e.Lo, e.Hi)
	return fmt.Sprintf("%s%s [%s, %s]", c, u, lo, hi)
}

// FormatLoad writes a load with two or three significant digits: "61",
// "4.2", "0.85".
func FormatLoad(x float64) string {
	if x >= 10 {
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	return strings.TrimSuffix(strconv.FormatFloat(x, 'g', 2, 64), ".")
}

// formatInterval writes a center and its interval as FormatLoad does, with
// up to two more decimals where the interval would otherwise round onto the
// center ("13.2 [12.8, 13.6]" rather than "13 [13, 14]").
func formatInterval(c, lo, hi float64) (string, string, string) {
	f := func(x float64, extra int) string {
		if extra == 0 {
			return FormatLoad(x)
		}
		dec := extra
		if x < 10 {
			dec = max(0, 1-int(math.Floor(math.Log10(math.Abs(x)+1e-300)))) + extra
		}
		return strconv.FormatFloat(x, 'f', dec, 64)
	}
	for extra := range 3 {
		a, b, d := f(c, extra), f(lo, extra), f(hi, extra)
		if (a != b && a != d) || extra == 2 {
			return a, b, d
		}
	}
	return FormatLoad(c), FormatLoad(lo), FormatLoad(hi)
}

// CompareCapacity compares one scenario's capacity in two runs, new over
// old. The rounds of two runs have nothing in common, so the launches are
// not paired: each run's log capacities give a mean and a variance, combined
// as in Welch's test; a run with one launch borrows the other's variance (the
// same scenario on the same kind of host), and with one launch in both there
// is no error estimate and the comparison stays inconclusive. The outcome
// comes from Decide over the diff's family, then SettleCapacity.
func CompareCapacity(old, new *ScenarioCapacity, conf float64) *Comparison {
	lo, ln := capacityLogs(old), capacityLogs(new)
	eo, en := meanLogs(lo), meanLogs(ln)
	vo, vn := eo.SE*eo.SE*float64(len(lo)), en.SE*en.SE*float64(len(ln))
	dfo, dfn := eo.DF, en.DF
	switch {
	case dfo <= 0 && dfn > 0:
		vo, dfo = vn, dfn
	case dfn <= 0 && dfo > 0:
		vn, dfn = vo, dfo
	}
	e := rule.Diff{D: en.D - eo.D}
	sd := math.NaN()
	if dfo > 0 {
		wo, wn := vo/float64(len(lo)), vn/float64(len(ln))
		e.SE = math.Sqrt(wo + wn)
		switch {
		case eo.DF <= 0 || en.DF <= 0: // one variance serves both sides
			e.DF = max(dfo, dfn)
		case wo+wn > 0:
			e.DF = (wo + wn) * (wo + wn) / (wo*wo/dfo + wn*wn/dfn)
		default:
			e.DF = dfo + dfn
		}
		sd = math.Sqrt((vo + vn) / 2)
	}
	c := newComparison(e, MethodLaunches, min(len(lo), len(ln)), sd, conf)
	if !e.OK() {
		c.Method = MethodWithinLaunch
	}
	return &c
}

func capacityLogs(s *ScenarioCapacity) []float64 {
	out := make([]float64, len(s.Launches))
	for i, l := range s.Launches {
		out[i] = math.Log(l.Capacity)
	}
	return out
}

// SettleCapacity applies to a decided comparison of b's capacity over a's
// what a bound allows: with a launch of either beyond the levels measured no
// tie is called, and a winner only when the bounds can only widen its lead;
// without an error estimate nothing is concluded.
func SettleCapacity(c *Comparison, a, b *ScenarioCapacity) {
	if !c.est.OK() {
		c.Outcome = OutcomeInconclusive
		return
	}
	if a.Bound == slo.Exact && b.Bound == slo.Exact {
		return
	}
	switch c.Outcome {
	case OutcomeTie:
		c.Outcome = OutcomeInconclusive
	case OutcomeFaster:
		if !widens(b.Bound, a.Bound) {
			c.Outcome = OutcomeInconclusive
		}
	case OutcomeSlower:
		if !widens(a.Bound, b.Bound) {
			c.Outcome = OutcomeInconclusive
		}
	}
}
