package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/results"
)

// What a campaign cost: the launches each scenario took and the time they
// ran, against what the fixed design of the same maximum would have taken.
// Under a sequential plan a variant's launches count until it stopped and
// the baseline's until the last variant stopped; under a fixed design every
// completed launch counts.

// CampaignCost is the cost line of a verdict.
type CampaignCost struct {
	// Comparisons counts the comparisons of the variants with the baseline
	// (each level, and each capacity); Decided those closed as faster,
	// slower or tie, Inconclusive those the campaign could not decide,
	// Doubted those closed undecided because bakeoff doubts their
	// measurement (OutcomeDoubted), Open those a sequential plan has not
	// closed yet.
	Comparisons  int `json:"comparisons"`
	Decided      int `json:"decided"`
	Inconclusive int `json:"inconclusive"`
	Doubted      int `json:"doubted,omitempty"`
	Open         int `json:"open"`
	// Bounded counts, of the decided, the inconclusive and the open ones,
	// the comparisons of a capacity known only as a one-sided bound (some
	// launch met the objective at every level, or missed it at the lowest):
	// such a comparison has no MDE worth quoting (its interval spans the
	// unmeasured side), so the line says what it was decided or left open
	// against instead.
	Bounded Bounded `json:"bounded,omitzero"`
	// MaxMDEPct is the largest minimum detectable effect, percent, among
	// the inconclusive comparisons but the bounded ones: the largest MDE
	// the table's cells and the capacity lines show.
	MaxMDEPct float64 `json:"max_mde_pct,omitempty"`
	// Launches is the launches counted over all scenarios; FixedLaunches
	// what the fixed design of the plan's maximum rounds takes (scenarios ×
	// rounds), equal to Launches when there is no plan.
	Launches      int `json:"launches"`
	FixedLaunches int `json:"fixed_launches"`
	// Duration is the counted launches' time, first start to last end of
	// each attempt (a failed or rerun attempt's time is paid too); zero
	// when the results do not say.
	Duration time.Duration `json:"duration_ns"`
	// GPUs is the GPUs of the host the launches held (0 when the results do
	// not say, or a host without a GPU); GPU-hours are Duration × GPUs.
	GPUs int `json:"gpus,omitempty"`
	// Budget is the time the campaign was given ("8h", "until 07:00"), from
	// the manifest; empty without one.
	Budget string `json:"budget,omitempty"`
	// Scenarios hold each scenario's share, in campaign order.
	Scenarios []ScenarioCost `json:"scenarios"`
	// Load is the host's load around the counted launches' sweeps; nil
	// when the results hold no reading (a run written before they did).
	Load *HostLoad `json:"host_load,omitempty"`
	// Sentence is the line the table ends with: "decided 14 of 16
	// comparisons in 5h10m; 2 inconclusive (MDE 2.6%)".
	Sentence string `json:"sentence"`
}

// Bounded counts comparisons of a capacity known only as a one-sided bound,
// by how they ended.
type Bounded struct {
	Decided      int `json:"decided,omitempty"`
	Inconclusive int `json:"inconclusive,omitempty"`
	Open         int `json:"open,omitempty"`
}

// HostLoad is the host's load around the counted launches' sweeps, as
// package hoststate read it before and after each: what the launches'
// noise, and so every interval, was measured under. It travels with the
// cost because the counted launches are decided here.
type HostLoad struct {
	// Load1 is the mean over the launches of their mean 1-minute load
	// average; Load1Max the largest launch's.
	Load1    float64 `json:"load1"`
	Load1Max float64 `json:"load1_max"`
	// CPUSomePct is the mean share of the time some task waited for a
	// CPU, percent (PSI "cpu some avg10"), over the readings that have it;
	// nil where the kernel has no PSI.
	CPUSomePct *float64 `json:"cpu_some_pct,omitempty"`
	// Launches counts the launches with a reading.
	Launches int `json:"launches"`
}

// ScenarioCost is one scenario's launches and their time.
type ScenarioCost struct {
	Scenario string        `json:"scenario"`
	Launches int           `json:"launches"`
	Duration time.Duration `json:"duration_ns"`
}

// Cost is the verdict's cost line; run gives the launches' start and end
// times and may be nil (no durations).
func Cost(v *Verdict, run *results.Run) CampaignCost {
	var cc CampaignCost
	upTo := map[string]int{} // the last round counted, per scenario
	last := 0
	open := false
	if v.Sequential != nil {
		// The launches stop with every metric's comparisons (LaunchStops);
		// the comparisons counted are throughput's.
		stops := v.LaunchStops()
		for i, vs := range v.Sequential.Variants {
			cc.Comparisons += vs.Comparisons
			cc.Decided += vs.Decided
			cc.Inconclusive += vs.Inconclusive
			if vs.Stopped {
				cc.Doubted += vs.Doubted
			}
			if ls := stops[i]; ls.Stopped {
				upTo[vs.Variant] = ls.StoppedAfter
				last = max(last, ls.StoppedAfter)
			} else {
				open = true
			}
		}
		cc.Open = cc.Comparisons - cc.Decided - cc.Inconclusive - cc.Doubted
		if !open {
			upTo[v.Baseline] = last
		}
		// Split over a fleet, the fixed design launches the baseline once
		// per part.
		cc.FixedLaunches = (len(v.Scenarios) + max(v.replicates.parts()-1, 0)) * v.Sequential.MaxRounds
	} else {
		for _, row := range v.Rows {
			for _, c := range row.Cells {
				if !c.Compared {
					continue
				}
				cc.Comparisons++
				switch c.Outcome {
				case OutcomeDoubted:
					cc.Doubted++
				case OutcomeInconclusive:
					cc.Inconclusive++
				default:
					cc.Decided++
				}
			}
		}
		if v.Capacity != nil {
			for _, c := range v.Capacity.Comparisons {
				cc.Comparisons++
				if c.Outcome == OutcomeInconclusive || c.Outcome == "" {
					cc.Inconclusive++
				} else {
					cc.Decided++
				}
			}
		}
	}
	cc.MaxMDEPct, cc.Bounded = undecidedFigures(v)
	var states []*hoststate.Launch
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		k, stopped := upTo[s.Name]
		sc := ScenarioCost{Scenario: s.Name}
		for _, l := range s.Launches {
			if l.Cut() || (stopped && v.replicate(l.Round) > k) {
				continue
			}
			sc.Launches++
			sc.Duration += launchDuration(run, s.Name, l.Round)
			states = append(states, launchState(run, s.Name, l.Round))
		}
		cc.Launches += sc.Launches
		cc.Duration += sc.Duration
		cc.Scenarios = append(cc.Scenarios, sc)
	}
	cc.Load = hostLoad(states)
	if cc.FixedLaunches == 0 {
		cc.FixedLaunches = cc.Launches
	}
	if run != nil {
		cc.GPUs, cc.Budget = len(run.Manifest.Host.GPUs), run.Manifest.Budget
	}
	cc.Sentence = cc.sentence()
	return cc
}

// launchDuration is the time of every attempt at one launch, from the run's
// summary; zero without a run.
func launchDuration(run *results.Run, name string, round int) time.Duration {
	if run == nil {
		return 0
	}
	var d time.Duration
	for _, sr := range run.Summary.Scenarios {
		if sr.Name != name || sr.RoundOf() != round {
			continue
		}
		for _, a := range append([]results.ScenarioResult{sr}, sr.History...) {
			if !a.Started.IsZero() && a.Ended.After(a.Started) {
				d += a.Ended.Sub(a.Started)
			}
		}
	}
	return d
}

// undecidedFigures are the largest MDE among the inconclusive comparisons
// with the baseline, read from the cells and the capacity comparisons the
// report shows, and the comparisons of a capacity known only as a bound.
// A bounded capacity's interval spans a side no launch measured: its MDE
// (past 100% where the bound is far from the levels) is no figure anyone
// was shown, and quoted as the campaign's it contradicted every table.
func undecidedFigures(v *Verdict) (maxMDE float64, b Bounded) {
	for _, row := range v.Rows {
		for _, c := range row.Cells {
			if c.Compared && c.Outcome == OutcomeInconclusive && !c.Open {
				maxMDE = max(maxMDE, c.MDEPct)
			}
		}
	}
	if v.Capacity == nil {
		return maxMDE, b
	}
	for _, c := range v.Capacity.Comparisons {
		decided := c.Outcome != OutcomeInconclusive && c.Outcome != ""
		switch {
		case !c.Censored && !decided && !c.Open:
			maxMDE = max(maxMDE, c.MDEPct)
		case !c.Censored:
		case decided:
			b.Decided++
		case c.Open:
			b.Open++
		default:
			b.Inconclusive++
		}
	}
	return maxMDE, b
}

// launchState is the host's state around one launch's sweep, from the
// run's summary; nil without a run or a reading.
func launchState(run *results.Run, name string, round int) *hoststate.Launch {
	if run == nil {
		return nil
	}
	for _, sr := range run.Summary.Scenarios {
		if sr.Name == name && sr.RoundOf() == round && sr.HostState != nil {
			return sr.HostState
		}
	}
	return nil
}

// hostLoad summarises the launches' host states; nil when none has a
// reading.
func hostLoad(ls []*hoststate.Launch) *HostLoad {
	sum := hoststate.Summarize(ls)
	if sum.Launches == 0 {
		return nil
	}
	h := &HostLoad{Load1: sum.Mean, Load1Max: sum.Max, Launches: sum.Launches}
	var psi float64
	n := 0
	for _, l := range ls {
		if l == nil {
			continue
		}
		for _, s := range []*hoststate.State{l.Before, l.After} {
			if s != nil && s.CPUSome10 != nil {
				psi += *s.CPUSome10
				n++
			}
		}
	}
	if n > 0 {
		psi /= float64(n)
		h.CPUSomePct = &psi
	}
	return h
}

func (cc CampaignCost) sentence() string {
	var b strings.Builder
	// "with the baseline": the legend's count is the whole corrected family,
	// the pairs of variants included, and one output must not give two
	// numbers of comparisons under one name.
	fmt.Fprintf(&b, "decided %d of %d comparisons with the baseline%s", cc.Decided, cc.Comparisons, boundedText(cc.Bounded.Decided))
	if cc.Duration > 0 {
		fmt.Fprintf(&b, " in %s", formatHours(cc.Duration))
		if cc.Budget != "" {
			fmt.Fprintf(&b, " of launches (budget %s)", cc.Budget)
		}
	}
	fmt.Fprintf(&b, " with %s", Plural(cc.Launches, "launch", "launches"))
	if cc.FixedLaunches > cc.Launches {
		fmt.Fprintf(&b, " (the fixed design: %d)", cc.FixedLaunches)
	}
	if cc.Inconclusive > 0 {
		fmt.Fprintf(&b, "; %d inconclusive%s", cc.Inconclusive, inconclusiveText(cc.Inconclusive, cc.Bounded.Inconclusive, cc.MaxMDEPct))
	}
	if cc.Doubted > 0 {
		fmt.Fprintf(&b, "; %d doubted", cc.Doubted)
	}
	if cc.Open > 0 {
		fmt.Fprintf(&b, "; %d open%s", cc.Open, boundedText(cc.Bounded.Open))
	}
	return b.String()
}

// inconclusiveText is what follows the count of inconclusive comparisons:
// the largest MDE of those that have one, and how many were left
// inconclusive against a one-sided capacity bound: " (MDE 4.1%)", " (MDE
// 4.1%; 1 against a one-sided capacity bound)", " (1 against a one-sided
// capacity bound)".
func inconclusiveText(n, bounded int, mde float64) string {
	if bounded == 0 {
		return " (" + MDEShort(mde) + ")"
	}
	if bounded == n {
		return boundedText(bounded)
	}
	return fmt.Sprintf(" (%s; %s)", MDEShort(mde), boundedWords(bounded))
}

// boundedText is " (1 against a one-sided capacity bound)" after a count of
// comparisons, or "" for none.
func boundedText(n int) string {
	if n == 0 {
		return ""
	}
	return " (" + boundedWords(n) + ")"
}

func boundedWords(n int) string {
	return fmt.Sprintf("%d against a one-sided capacity bound", n)
}

// formatHours writes a duration as "5h10m", "42m" or "35s".
func formatHours(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return d.String()
}

// GPUHours is a scenario's launch time times the host's GPUs; 0 when
// either is unknown.
func (cc CampaignCost) GPUHours(sc ScenarioCost) float64 {
	return sc.Duration.Hours() * float64(cc.GPUs)
}
