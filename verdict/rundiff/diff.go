package rundiff

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// DefaultThreshold is the slowdown, as a fraction, beyond which a
// significant difference counts as a regression.
const DefaultThreshold = 0.03

// Options tune Diff. The zero value means the defaults.
type Options struct {
	// Threshold is the fractional slowdown that counts as a regression when
	// significant (DefaultThreshold when zero).
	Threshold float64
	// Force compares runs whose sweep fingerprints differ.
	Force bool
	// Alpha is the significance level (DefaultAlpha when zero).
	Alpha float64
	// History are other runs of the campaign (HistoryOf picks them): the
	// run effect is learned from them, and absolute changes are judged
	// only with MinHistory of them or more.
	History []*results.Run
	// HistorySkipped says which candidate runs were left out of the
	// history and why; the diff repeats it.
	HistorySkipped []string
	// SkipUnreadable leaves out a run of the history whose records cannot
	// be read, adding it to HistorySkipped; without it such a run is an
	// error (results.UnreadableError), since the run effect learned
	// without it could be another than the campaign's.
	SkipUnreadable bool

	// WithinRunOnly judges absolute changes with the launches' variance
	// alone and no ratio rows, as the diff did before it knew the run
	// effect. It is for studies of that rule's errors (the honesty tests,
	// internal/contention), not for gating.
	WithinRunOnly bool
}

// FingerprintError refuses two runs measured under different sweeps.
type FingerprintError struct {
	Old, New string
	// Fields name the sweep settings that differ, "name: old → new".
	Fields []string
}

func (e *FingerprintError) Error() string {
	what := "no recorded sweep setting differs, but the fingerprints do (prompt text, engine or other hashed input)"
	if len(e.Fields) > 0 {
		what = strings.Join(e.Fields, "; ")
	}
	return fmt.Sprintf("the runs were measured under different sweeps (fingerprint %s vs %s): %s; use --force to compare anyway",
		shortFP(e.Old), shortFP(e.New), what)
}

func shortFP(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Row is one scenario at one level in both runs.
type Row struct {
	Scenario string           `json:"scenario"`
	Level    measure.Level    `json:"level"`
	Old      verdict.Estimate `json:"old"`
	New      verdict.Estimate `json:"new"`
	// Comparison is new against old, decided with every other row of the
	// diff as one family (corrected p-values, the verdict's outcomes).
	verdict.Comparison
	// Regression is a significant slowdown (OutcomeSlower) beyond the
	// threshold; Improvement a significant speed-up beyond it.
	Regression  bool `json:"regression,omitempty"`
	Improvement bool `json:"improvement,omitempty"`
	// Unjudged is set when the history is too short to know the run
	// effect (RunEffect.Enough): the row shows its change, but it is no
	// member of the family and can be no regression, since a change of a
	// run's absolute figures cannot be told from the run's own luck.
	Unjudged bool `json:"unjudged,omitempty"`
	// DoubtedIn names the runs ("OLD", "NEW") whose measurement of the
	// scenario at this level its own verdict doubted (Level.Doubts: a
	// paced client, counts that disagree, a GPU held down): the row is
	// then OutcomeDoubted with those doubts, no member of the family and
	// no regression, whatever its change.
	DoubtedIn []string `json:"doubted_in,omitempty"`
	// PerGPU is set when the scenario holds different numbers of GPUs in
	// the two runs (Result.GPUChanges): the comparison, and so the
	// regression, is of throughput per GPU, OldPerGPU against NewPerGPU;
	// Old and New stay each launch's whole throughput.
	PerGPU    bool              `json:"per_gpu,omitempty"`
	OldPerGPU *verdict.Estimate `json:"old_per_gpu,omitempty"`
	NewPerGPU *verdict.Estimate `json:"new_per_gpu,omitempty"`
}

// GPUChange is a scenario whose deployment holds different numbers of GPUs
// in the two runs (Scenario.GPUs, both known).
type GPUChange struct {
	Scenario string `json:"scenario"`
	Old      int    `json:"old"`
	New      int    `json:"new"`
}

// Result compares the same scenarios in two runs, level by level.
type Result struct {
	OldRun, NewRun string
	Threshold      float64
	Alpha          float64
	// Correction, MinEffectPct and EquivalenceMarginPct are the decision
	// rule's, as the verdict applies them (the new run's campaign keys).
	Correction           string
	MinEffectPct         float64
	EquivalenceMarginPct float64
	// OldRounds and NewRounds are the most launches a scenario has in each.
	OldRounds, NewRounds int
	// Forced is set when the fingerprints differ and Force allowed it;
	// FingerprintFields then says how.
	Forced            bool
	FingerprintFields []string
	// Engines says, per engine (and host), where the two runs' engines
	// printed different helps before their first launch: different builds
	// (engines.go). Empty when they match or a run has no record of them.
	Engines []string `json:"engines,omitempty"`
	Rows    []Row
	// RunEffect is the run-to-run variance learned from the history; its
	// Runs are empty without any. HistorySkipped are the runs left out of
	// it, and why.
	RunEffect      *RunEffect `json:"run_effect"`
	HistorySkipped []string   `json:"history_skipped,omitempty"`
	// Ratios are each variant's ratio to the baseline in both runs and its
	// change, free of the run effect: judged with or without history.
	Ratios []RatioRow `json:"ratios,omitempty"`
	// OldLoad and NewLoad are each run's host load over its launches'
	// sweeps; HostLoad says, in words, when they differ enough to move the
	// figures (hoststate.LoadDiffers), empty otherwise.
	OldLoad  hoststate.Summary `json:"old_load"`
	NewLoad  hoststate.Summary `json:"new_load"`
	HostLoad string            `json:"host_load,omitempty"`
	// HostFacts are the host facts the two runs' manifests record
	// differently ("driver 580.65 → 590.12"): a change of the machine
	// under the engine.
	HostFacts []string `json:"host_facts,omitempty"`
	// HostGPUs say, one sentence each, how the two runs' GPUs differed
	// around their sweeps (hoststate.GPUDiffers): a power limit or max
	// clock, a throttle reason one run saw and the other never did.
	HostGPUs []string `json:"host_gpus,omitempty"`
	// OldNotes and NewNotes are each run's own warnings and errors (the
	// verdict's notes of those severities), which the diff repeats above
	// its table: a run that warned of itself warns its diff too.
	OldNotes []verdict.Note `json:"old_notes,omitempty"`
	NewNotes []verdict.Note `json:"new_notes,omitempty"`
	// GPUChanges are the scenarios whose GPUs differ between the runs, in
	// the old run's order: their rows are compared per GPU, as the verdict
	// compares scenarios of different sizes (pergpu.go).
	GPUChanges []GPUChange `json:"gpu_changes,omitempty"`
	// Unmatched names what only one run has ("scenario X only in OLD",
	// "X C=250 only in NEW").
	Unmatched []string
	// Capacity compares the capacities under the SLO when both runs have
	// the same one; nil when neither has one.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Accept compares the speculative accept length where both runs have
	// it, Server the server's own running batch and generation throughput
	// where either run has them (diff_why.go): what explains a change in
	// throughput, outside the corrected family.
	Accept []AcceptRow `json:"accept,omitempty"`
	Server []ServerRow `json:"server,omitempty"`
	// Turns set each turn's TTFT of multi-turn sessions side by side,
	// descriptively; empty without sessions.
	Turns []TurnRow `json:"turns,omitempty"`
}

// Capacity compares each scenario's capacity under the SLO in two runs.
type Capacity struct {
	Objective string `json:"objective"`
	Unit      string `json:"unit"`
	// Rows are decided in the same family as the throughput rows.
	Rows []CapacityRow `json:"rows"`
	// Note says why the capacities were not compared, when they were not.
	Note string `json:"note,omitempty"`
}

// CapacityRow is one scenario's capacity in both runs, new against old.
type CapacityRow struct {
	Scenario string `json:"scenario"`
	// Old and New are the capacities as the verdict writes them.
	Old string `json:"old"`
	New string `json:"new"`
	verdict.Comparison
	// Censored is set when a launch of either run was beyond the levels
	// measured, so that its capacity is only a bound.
	Censored bool `json:"censored,omitempty"`
	// Regression is a lower capacity (OutcomeSlower) beyond the threshold;
	// Improvement a higher one beyond it.
	Regression  bool `json:"regression,omitempty"`
	Improvement bool `json:"improvement,omitempty"`
	// Unjudged is set as for a Row: without enough history a capacity,
	// a run's own figure, is shown and not judged.
	Unjudged bool `json:"unjudged,omitempty"`
	// PerGPU is set when the scenario's GPUs differ between the runs: the
	// comparison is then of the capacity per GPU, the load each GPU
	// carries, as the rows of throughput are, and OldPerGPU and NewPerGPU
	// write it with the GPUs ("7.6 [6.9, 8.3] per GPU on 8 GPUs").
	PerGPU    bool   `json:"per_gpu,omitempty"`
	OldPerGPU string `json:"old_per_gpu,omitempty"`
	NewPerGPU string `json:"new_per_gpu,omitempty"`
}

// Comparisons is the size of the diff's corrected family: its throughput
// rows and its capacity rows.
func (d *Result) Comparisons() int {
	n := 0
	for _, r := range d.Ratios {
		if len(r.DoubtedIn) == 0 {
			n++
		}
	}
	for _, r := range d.Rows {
		if !r.Unjudged && len(r.DoubtedIn) == 0 {
			n++
		}
	}
	if d.Capacity != nil {
		for _, r := range d.Capacity.Rows {
			if !r.Unjudged {
				n++
			}
		}
	}
	return n
}

// Regressed reports whether any row is a significant regression beyond the
// threshold.
func (d *Result) Regressed() bool {
	for _, r := range d.Rows {
		if r.Regression {
			return true
		}
	}
	for _, r := range d.Ratios {
		if r.Regression {
			return true
		}
	}
	if d.Capacity != nil {
		for _, r := range d.Capacity.Rows {
			if r.Regression {
				return true
			}
		}
	}
	return false
}

// Compare compares two runs, as `bakeoff diff` shows them (report.DiffText):
// every scenario both measured, at every level both measured, new against
// old, with the verdict's statistics: one figure per
// launch, each run's launch-to-launch variance pooled over its levels (the
// within-launch samples when both runs launched the scenario once, and then
// the minimum effect as a floor), every row one comparison of a family
// corrected as the verdict's is. Runs with different sweep fingerprints are
// refused with a *FingerprintError unless o.Force.
func Compare(old, new *results.Run, o Options) (*Result, error) {
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = verdict.DefaultAlpha
	}
	d := &Result{OldRun: old.Dir, NewRun: new.Dir, Threshold: o.Threshold, Alpha: o.Alpha,
		Engines: verdict.EngineDiff(old.Manifest.Engines, new.Manifest.Engines)}
	if old.Manifest.Fingerprint != new.Manifest.Fingerprint {
		fields := sweepDiff(old.Manifest.Sweep, new.Manifest.Sweep)
		if !o.Force {
			return nil, &FingerprintError{Old: old.Manifest.Fingerprint, New: new.Manifest.Fingerprint, Fields: fields}
		}
		d.Forced, d.FingerprintFields = true, fields
	}
	if old.Manifest.Campaign != new.Manifest.Campaign && !o.Force {
		return nil, fmt.Errorf("%s is a run of campaign %q and %s of %q: a diff compares runs of one campaign; use --force to compare anyway",
			old.Dir, old.Manifest.Campaign, new.Dir, new.Manifest.Campaign)
	}
	vo, err := judge.Run(old, verdict.Options{Alpha: o.Alpha})
	if err != nil {
		return nil, fmt.Errorf("judging %s: %w", old.Dir, err)
	}
	vn, err := judge.Run(new, verdict.Options{Alpha: o.Alpha})
	if err != nil {
		return nil, fmt.Errorf("judging %s: %w", new.Dir, err)
	}
	d.OldNotes, d.NewNotes = loudNotes(vo), loudNotes(vn)
	d.OldLoad, d.NewLoad = hostLoad(old), hostLoad(new)
	d.HostLoad = hoststate.LoadDiffers(d.OldLoad, d.NewLoad)
	d.HostFacts = hostFactsDiff(old.Manifest.Host, new.Manifest.Host)
	d.HostGPUs = hoststate.GPUDiffers(hostStates(old), hostStates(new))
	d.HistorySkipped = o.HistorySkipped
	var hv []*verdict.Verdict
	var dirs []string
	for _, h := range o.History {
		v := vo
		if !SameDir(h.Dir, old.Dir) {
			// The run effect needs each run's figures, not its notes.
			in, err := records.Read(h)
			if err == nil {
				v, err = verdict.DecideRun(in, verdict.Options{Alpha: o.Alpha})
			}
			if err != nil && !o.SkipUnreadable {
				return nil, &results.UnreadableError{Run: h.Dir, Err: err}
			}
			if err != nil {
				d.HistorySkipped = append(d.HistorySkipped, fmt.Sprintf("%s: %v", h.Dir, err))
				continue
			}
		}
		hv, dirs = append(hv, v), append(dirs, h.Dir)
	}
	d.RunEffect = learnRunEffect(hv, dirs)
	d.Correction, d.MinEffectPct, d.EquivalenceMarginPct = vn.Correction, vn.MinEffectPct, vn.EquivalenceMarginPct
	d.OldRounds, d.NewRounds = vo.Rounds, vn.Rounds
	var family, judged []*verdict.Comparison
	for _, so := range vo.Scenarios {
		sn := vn.Scenario(so.Name)
		oldNone := so.Failed() || len(so.Levels) == 0
		switch {
		case oldNone && (sn == nil || sn.Failed() || len(sn.Levels) == 0):
			d.Unmatched = append(d.Unmatched, fmt.Sprintf("%s: no measurements in either run", so.Name))
			continue
		case sn == nil || sn.Failed() || len(sn.Levels) == 0:
			d.Unmatched = append(d.Unmatched, fmt.Sprintf("%s: no measurements in NEW", so.Name))
			continue
		case oldNone:
			d.Unmatched = append(d.Unmatched, fmt.Sprintf("%s: no measurements in OLD", so.Name))
			continue
		}
		// A deployment that holds other GPUs in the new run is compared
		// per GPU: on throughput alone, halving its GPUs would read as a
		// regression and doubling them as an improvement, whatever each GPU
		// did.
		perGPU := so.GPUs > 0 && sn.GPUs > 0 && so.GPUs != sn.GPUs
		cs := verdict.CompareRuns(&so, sn, vn.Confidence)
		if perGPU {
			d.GPUChanges = append(d.GPUChanges, GPUChange{Scenario: so.Name, Old: so.GPUs, New: sn.GPUs})
			po, pn := so, *sn
			po.Levels, pn.Levels = verdict.LevelsOver(so.Levels, float64(so.GPUs)), verdict.LevelsOver(sn.Levels, float64(sn.GPUs))
			cs = verdict.CompareRuns(&po, &pn, vn.Confidence)
		}
		for _, lo := range so.Levels {
			ln := sn.Level(lo.Level)
			if ln == nil {
				d.Unmatched = append(d.Unmatched, fmt.Sprintf("%s %s: only in OLD", so.Name, measure.LevelName(lo.Level)))
				continue
			}
			c, ok := cs[lo.Level]
			if !ok {
				d.Unmatched = append(d.Unmatched, fmt.Sprintf("%s %s: %s", so.Name, measure.LevelName(lo.Level), uncompared(&lo, ln)))
				continue
			}
			row := Row{Scenario: so.Name, Level: lo.Level, Old: lo.Throughput, New: ln.Throughput}
			if perGPU {
				po, pn := lo.Throughput.Over(float64(so.GPUs)), ln.Throughput.Over(float64(sn.GPUs))
				row.PerGPU, row.OldPerGPU, row.NewPerGPU = true, &po, &pn
			}
			ds, in := sidesDoubts(lo.Doubts, ln.Doubts)
			switch {
			case len(in) > 0 && !o.WithinRunOnly:
				// A run that doubted its own figure cannot vouch for
				// its change either.
				verdict.MarkDoubted(c, ds)
				row.DoubtedIn, row.Comparison = in, *c
			case o.WithinRunOnly:
				family = append(family, c)
			case d.RunEffect.Enough():
				verdict.WithRunEffect(c, d.RunEffect.Var, d.RunEffect.DF, vn.Confidence)
				family = append(family, c)
			default:
				row.Unjudged = true
				row.Comparison = *c
			}
			d.Rows = append(d.Rows, row)
			judged = append(judged, c)
		}
		for _, ln := range sn.Levels {
			if so.Level(ln.Level) == nil {
				d.Unmatched = append(d.Unmatched, fmt.Sprintf("%s %s: only in NEW", so.Name, measure.LevelName(ln.Level)))
			}
		}
	}
	for _, sn := range vn.Scenarios {
		if vo.Scenario(sn.Name) == nil {
			d.Unmatched = append(d.Unmatched, fmt.Sprintf("%s: only in NEW", sn.Name))
		}
	}
	diffWhy(d, vo, vn)
	d.Turns = diffTurns(vo, vn)
	var ratios []RatioRow
	var rcs []*verdict.Comparison
	if !o.WithinRunOnly {
		ratios, rcs = ratioRows(vo, vn)
	}
	d.Ratios = ratios
	for i, c := range rcs {
		if len(ratios[i].DoubtedIn) == 0 {
			family = append(family, c)
		}
	}
	caps := diffCapacity(d, vo, vn)
	capJudged := o.WithinRunOnly || d.RunEffect.Enough()
	for _, c := range caps {
		// A capacity is a run's own absolute figure, as a throughput is:
		// judged with the run effect, or not at all.
		if !capJudged {
			continue
		}
		if !o.WithinRunOnly {
			verdict.WithRunEffect(c.cmp, d.RunEffect.Var, d.RunEffect.DF, vn.Confidence)
		}
		family = append(family, c.cmp)
	}
	verdict.Decide(family, o.Alpha, d.Correction, d.MinEffectPct, d.EquivalenceMarginPct)
	for _, c := range caps {
		if capJudged {
			verdict.SettleCapacity(c.cmp, c.old, c.new)
		}
		r := CapacityRow{Scenario: c.old.Scenario, Old: c.old.Text, New: c.new.Text, Comparison: *c.cmp,
			Censored: c.old.Bound != "" || c.new.Bound != "", Unjudged: !capJudged}
		if c.perGPU {
			r.PerGPU, r.OldPerGPU, r.NewPerGPU = true, verdict.PerGPUAside(c.old), verdict.PerGPUAside(c.new)
		}
		r.Regression = r.Outcome == verdict.OutcomeSlower && r.DeltaPct <= -100*o.Threshold
		r.Improvement = r.Outcome == verdict.OutcomeFaster && r.DeltaPct >= 100*o.Threshold
		d.Capacity.Rows = append(d.Capacity.Rows, r)
	}
	for i := range d.Rows {
		r := &d.Rows[i]
		if r.Unjudged || len(r.DoubtedIn) > 0 {
			continue
		}
		r.Comparison = *judged[i]
		r.Regression = r.Outcome == verdict.OutcomeSlower && r.DeltaPct <= -100*o.Threshold
		r.Improvement = r.Outcome == verdict.OutcomeFaster && r.DeltaPct >= 100*o.Threshold
	}
	for i := range d.Ratios {
		r := &d.Ratios[i]
		r.Comparison = *rcs[i]
		r.Regression = r.Outcome == verdict.OutcomeSlower && r.DeltaPct <= -100*o.Threshold
		r.Improvement = r.Outcome == verdict.OutcomeFaster && r.DeltaPct >= 100*o.Threshold
	}
	return d, nil
}

// sidesDoubts are the doubts of one measurement in the old and the new run,
// together, and the runs that had any ("OLD", "NEW").
func sidesDoubts(old, new []verdict.Doubt) (ds []verdict.Doubt, in []string) {
	if len(old) > 0 {
		ds, in = append(ds, old...), append(in, "OLD")
	}
	if len(new) > 0 {
		ds, in = append(ds, new...), append(in, "NEW")
	}
	return ds, in
}

// loudNotes are a run's warnings and errors: what its own report shows
// with ! and !!.
func loudNotes(v *verdict.Verdict) []verdict.Note {
	var out []verdict.Note
	for _, n := range v.Notes {
		if n.Severity == verdict.SeverityWarn || n.Severity == verdict.SeverityRed {
			out = append(out, n)
		}
	}
	return out
}

// PerGPULine is the line above the diff's table when some scenario holds
// other GPUs in the new run: "per GPU: tp 8 GPUs in OLD, 4 GPUs in NEW;
// its changes are of throughput per GPU"; empty when none does. Its
// capacity, under an objective, is compared per GPU too.
func (d *Result) PerGPULine() string {
	if len(d.GPUChanges) == 0 {
		return ""
	}
	var parts []string
	for _, g := range d.GPUChanges {
		parts = append(parts, fmt.Sprintf("%s %s in OLD, %s in NEW", g.Scenario, verdict.GPUsText(g.Old), verdict.GPUsText(g.New)))
	}
	its := "its changes are"
	if len(parts) > 1 {
		its = "their changes are"
	}
	return "per GPU: " + strings.Join(parts, "; ") + "; " + its + " of throughput per GPU"
}

// uncompared says why a level both runs measured has no comparison: the
// server could not keep up with its arrivals in one run or both (a
// saturated level's figures depend on how long it ran, not on the server),
// or one run has no throughput for it.
func uncompared(old, new *verdict.Level) string {
	switch {
	case old.Saturated && new.Saturated:
		return "saturated in both runs (not compared)"
	case old.Saturated:
		return "saturated in OLD (not compared)"
	case new.Saturated:
		return "saturated in NEW (not compared)"
	}
	return "no throughput in one run"
}

// sweepDiff lists the SweepInfo fields that differ, by their JSON names.
func sweepDiff(a, b results.SweepInfo) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := range t.NumField() {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		if reflect.DeepEqual(fa, fb) {
			continue
		}
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		if name == "" {
			name = t.Field(i).Name
		}
		out = append(out, fmt.Sprintf("%s: %v → %v", name, fa, fb))
	}
	return out
}

// capacityPair is one scenario's capacity in both runs and their comparison,
// per GPU when its GPUs differ between them.
type capacityPair struct {
	old, new *verdict.ScenarioCapacity
	cmp      *verdict.Comparison
	perGPU   bool
}

// diffCapacity pairs the scenarios' capacities when both runs judged them
// under the same objective, and sets d.Capacity; a note says why not
// otherwise.
func diffCapacity(d *Result, vo, vn *verdict.Verdict) []capacityPair {
	co, cn := vo.Capacity, vn.Capacity
	switch {
	case co == nil && cn == nil:
		return nil
	case co == nil || cn == nil || !co.SLO.Equal(cn.SLO) || co.Unit != cn.Unit:
		d.Capacity = &Capacity{Note: fmt.Sprintf("capacities not compared: the runs' SLOs differ (%s vs %s)",
			objectiveOf(co), objectiveOf(cn))}
		return nil
	}
	d.Capacity = &Capacity{Objective: cn.Objective, Unit: cn.Unit}
	var out []capacityPair
	for i := range co.Scenarios {
		so := &co.Scenarios[i]
		for j := range cn.Scenarios {
			sn := &cn.Scenarios[j]
			if sn.Scenario != so.Scenario {
				continue
			}
			if so.GPUs > 0 && sn.GPUs > 0 && so.GPUs != sn.GPUs {
				// As the throughput: a deployment resized between the
				// runs is judged by the load each of its GPUs carries.
				// The division moves no bound, which SettleCapacity reads.
				out = append(out, capacityPair{so, sn, verdict.CompareCapacity(so.Over(float64(so.GPUs)), sn.Over(float64(sn.GPUs)), vn.Confidence), true})
				continue
			}
			out = append(out, capacityPair{so, sn, verdict.CompareCapacity(so, sn, vn.Confidence), false})
		}
	}
	return out
}

func objectiveOf(c *verdict.CapacityVerdict) string {
	if c == nil {
		return "none"
	}
	return c.Objective
}

// hostLoad summarises the host load around every launch of a run.
func hostLoad(r *results.Run) hoststate.Summary {
	return hoststate.Summarize(hostStates(r))
}

// hostStates are the host states around every launch of a run.
func hostStates(r *results.Run) []*hoststate.Launch {
	var ls []*hoststate.Launch
	for _, sr := range r.Summary.Scenarios {
		ls = append(ls, sr.HostState)
	}
	return ls
}

// hostFactsDiff lists the host facts two runs recorded differently, each
// known in both: its name, host, kernel, CPU governor, GPU driver and GPUs.
func hostFactsDiff(old, new results.HostFacts) []string {
	var out []string
	for _, f := range []struct{ what, a, b string }{
		{"host", old.Name, new.Name},
		{"kernel", old.Kernel, new.Kernel},
		{"CPU governor", old.Governor, new.Governor},
		{"GPU driver", old.Driver, new.Driver},
		{"GPUs", strings.Join(old.GPUs, ", "), strings.Join(new.GPUs, ", ")},
	} {
		if f.a != "" && f.b != "" && f.a != f.b {
			out = append(out, fmt.Sprintf("%s %s → %s", f.what, f.a, f.b))
		}
	}
	return out
}
