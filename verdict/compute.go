package verdict

import (
	"cmp"
	"fmt"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"maps"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// DecideRun measures every level of every scenario from the records and
// applies the rule: the comparisons and their families, the sequential
// looks and stops, capacity, the per-GPU view and the Pareto frontier. It
// leaves the explanations (package explain) and the notes (package notes)
// empty; package judge computes a whole verdict, them included.
func DecideRun(in records.Input, o Options) (*Verdict, error) {
	var metric *measure.Metric
	if o.Metric != "" && o.Metric != measure.MetricThroughput {
		m, ok := measure.MetricByName(o.Metric)
		if !ok {
			return nil, fmt.Errorf("verdict: unknown metric %q (known: %s)", o.Metric, measure.MetricNames())
		}
		metric = &m
	}
	if o.Sequential == nil && in.Manifest.MinRounds > 0 && in.Manifest.MinRounds < in.Manifest.Rounds {
		// A sequential campaign is judged by the rule it ran under, so the
		// report and diff replay the looks the run took.
		o.Sequential = &SequentialPlan{MinRounds: in.Manifest.MinRounds, MaxRounds: in.Manifest.Rounds}
	}
	v := &Verdict{
		Campaign: in.Manifest.Campaign, Run: in.Manifest.Run, Dir: in.Dir,
		Fingerprint: in.Manifest.Fingerprint, Baseline: in.Manifest.Baseline,
		Alpha: o.alpha(), Confidence: DefaultConfidence, Correction: o.correction(),
		MinEffectPct:         firstPositive(o.MinEffectPct, in.Manifest.MinEffectPct, DefaultMinEffectPct),
		EquivalenceMarginPct: firstPositive(o.EquivalenceMarginPct, in.Manifest.EquivalenceMarginPct, DefaultEquivalenceMarginPct),
		RoundsPlanned:        max(in.Manifest.Rounds, 1),
		MaxTokens:            in.Manifest.Sweep.MaxTokens, IgnoreEOS: in.Manifest.Sweep.IgnoreEOS,
		Temperature: in.Manifest.Sweep.Temperature,
		Percentiles: measure.PercentilesOr(in.Manifest.Sweep.Percentiles),
		Engines:     EngineLines(in.Manifest.Engines),
	}
	if o.Sequential != nil {
		// The sequential looks correct by Holm's procedure made sequential
		// (holmLook) whatever Options.Correction asks, which applies to the
		// fixed design alone: the verdict says the correction it applied.
		v.Correction = rule.CorrectionHolm
	}
	v.replicates, v.Parts = newReplicateOf(in.Manifest.Replicates), len(in.Manifest.Replicates)
	v.Prior = o.Prior
	v.truth = o.truth
	if v.Prior == nil && in.Manifest.NoisePrior != nil {
		// The prior the run started with, so that the report replays the
		// looks the run took.
		p := NoisePrior(*in.Manifest.NoisePrior)
		v.Prior = &p
	}
	if v.Campaign == "" {
		v.Campaign = in.Summary.Campaign
	}
	if v.Run == "" {
		v.Run = in.Summary.Run
	}
	if v.Fingerprint == "" {
		v.Fingerprint = in.Summary.Fingerprint
	}
	if v.Baseline == "" {
		v.Baseline = in.Summary.Baseline
	}
	if o.Baseline != "" {
		v.Baseline = o.Baseline
	}
	order := records.Order(in.Manifest, in.Summary)
	for _, name := range slices.Sorted(maps.Keys(in.Launches)) {
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	if !slices.Contains(order, v.Baseline) {
		return nil, fmt.Errorf("verdict: baseline %q is not a scenario of this run (scenarios: %v)", v.Baseline, order)
	}
	levelSet := map[measure.Level]bool{}
	for _, name := range order {
		s := newScenario(name, in)
		if !s.Failed() {
			var from *Scenario
			if o.measured != nil {
				from = o.measured.scenario(name)
			}
			s.Levels = measureScenario(in.Launches[name], o.Slices(), v.Percentiles, metric, from)
			for i := range s.Levels {
				l := &s.Levels[i]
				l.AcceptLength, l.ClientLimited = summaryLevelFacts(in.Launches[name], l.Level)
				l.InputLengths = inputLengths(in.Launches[name], l.Level)
				if !measure.IsRate(l.Level) {
					// Closed loop: judged on every launch pooled. One
					// launch's pacing is part of the round-to-round noise
					// the interval carries; pacing over the whole is a
					// figure the client, not the server, set.
					l.ClientLimited = clientLimited(l)
				}
				l.launchFacts = levelFacts(in.Launches[name], l.Level)
				l.Doubts = levelDoubts(name, l)
				levelSet[l.Level] = true
			}
			scenarioIntervals(&s, v.Confidence)
		}
		done := v.completedReplicates(&s)
		v.Rounds = max(v.Rounds, done)
		if !s.Failed() && len(s.Launches) > 0 && (v.RoundsCompleted == 0 || done < v.RoundsCompleted) {
			v.RoundsCompleted = done
		}
		v.Scenarios = append(v.Scenarios, s)
	}
	v.Levels = slices.SortedFunc(maps.Keys(levelSet), measure.Level.Compare)
	if metric != nil {
		// A latency or a per-user speed is no figure per GPU, and capacity
		// and the Pareto frontier are throughput's.
		compareAll(v, o.Sequential)
		return v, nil
	}
	setGPUs(v, in.Manifest.ScenarioGPUs)
	v.Hosts = hostSpeeds(v)
	v.Capacity = measureSLO(v, in, o.Slices())
	compareAll(v, o.Sequential)
	v.Capacity.finish(v)
	v.Pareto = paretoOf(v)
	for _, m := range in.Manifest.VerdictMetrics {
		o.measured = v
		mv, err := decideMetric(in, o, m, v.EquivalenceMarginPct)
		if err != nil {
			return nil, err
		}
		v.Metrics = append(v.Metrics, mv)
	}
	if len(v.Metrics) > 0 {
		// The rounds asked of each scenario run to the last metric's stop.
		sequentialRounds(v)
	}
	return v, nil
}

// newScenario is a scenario's identity and status over its launches: the
// summary's results (one per round) and the launches with records.
func newScenario(name string, in records.Input) Scenario {
	s := Scenario{Name: name, Status: results.StatusPending}
	withRecords := map[int]records.Launch{}
	for _, l := range in.Launches[name] {
		withRecords[l.Round] = l
	}
	for i := range in.Summary.Scenarios {
		newest := &in.Summary.Scenarios[i]
		if newest.Name != name {
			continue
		}
		from := newest
		if c := newest.Complete(); c != nil {
			from = c
		}
		li := LaunchInfo{Round: newest.RoundOf(), Attempt: from.Attempt, Status: from.Status,
			FailedPhase: from.FailedPhase, Reason: from.Reason, Dir: from.AttemptDir(), Host: from.HostName}
		if l, ok := withRecords[li.Round]; ok {
			li.Order, li.Dir = l.Order, l.Dir
			li.Host = cmp.Or(l.Host, li.Host)
		}
		if from != newest {
			li.Newest = &Attempt{Attempt: newest.Attempt, Status: newest.Status,
				FailedPhase: newest.FailedPhase, Reason: newest.Reason}
		}
		if s.Fingerprint == "" {
			s.Fingerprint = from.Fingerprint
		}
		if from.AcceptLength != nil && s.AcceptLength == nil {
			a := *from.AcceptLength
			s.AcceptLength = &a
		}
		s.Launches = append(s.Launches, li)
	}
	// Records without a summary entry: a test that builds records alone.
	for _, l := range in.Launches[name] {
		if !slices.ContainsFunc(s.Launches, func(li LaunchInfo) bool { return li.Round == l.Round }) {
			s.Launches = append(s.Launches, LaunchInfo{Round: l.Round, Order: l.Order, Attempt: 1,
				Status: results.StatusOK, Dir: l.Dir, Host: l.Host})
		}
	}
	slices.SortStableFunc(s.Launches, func(a, b LaunchInfo) int { return a.Round - b.Round })
	ok, failed := 0, 0
	for _, li := range s.Launches {
		switch li.Status {
		case results.StatusOK:
			ok++
		case results.StatusFailed:
			failed++
		}
	}
	switch {
	case len(s.Launches) == 0:
	case failed == len(s.Launches):
		s.Status = results.StatusFailed
	case ok > 0:
		s.Status = results.StatusOK
	default:
		s.Status = s.Launches[0].Status
	}
	// The first launch names the scenario's attempt, folder and failure: the
	// whole story in a run of one round.
	if len(s.Launches) > 0 {
		first := s.Launches[0]
		for _, li := range s.Launches {
			if s.Status == results.StatusFailed || li.Status != results.StatusFailed {
				first = li
				break
			}
		}
		s.Attempt, s.Dir, s.Newest = first.Attempt, first.Dir, first.Newest
		s.FailedPhase, s.Reason = first.FailedPhase, first.Reason
		if s.Status == results.StatusFailed {
			s.FailedPhase, s.Reason = s.Launches[0].FailedPhase, s.Launches[0].Reason
		}
	}
	return s
}

func firstPositive(xs ...float64) float64 {
	for _, x := range xs {
		if x > 0 {
			return x
		}
	}
	return 0
}

func (v *Verdict) scenario(name string) *Scenario {
	for i := range v.Scenarios {
		if v.Scenarios[i].Name == name {
			return &v.Scenarios[i]
		}
	}
	return nil
}

// Scenario returns the named scenario, or nil.
func (v *Verdict) Scenario(name string) *Scenario { return v.scenario(name) }

// Cell returns the cell of scenario name at level c, or nil.
func (v *Verdict) Cell(c measure.Level, name string) *Cell { return cellIn(v.Rows, c, name) }

// cellIn is the cell of scenario name at level c among rows, or nil.
func cellIn(rows []Row, c measure.Level, name string) *Cell {
	for i := range rows {
		if rows[i].Level == c {
			return rows[i].Cell(name)
		}
	}
	return nil
}

// Cell returns the row's cell of scenario name, or nil.
func (r *Row) Cell(name string) *Cell {
	for j := range r.Cells {
		if r.Cells[j].Scenario == name {
			return &r.Cells[j]
		}
	}
	return nil
}

// summaryLevelFacts returns what only the server could tell (the accept
// length) and the load generator's own client-limited flag, from the level
// summaries of the launches' results, averaged over launches and repeats.
func summaryLevelFacts(launches []records.Launch, c measure.Level) (*float64, bool) {
	var sum float64
	var n int
	limited := false
	for _, l := range launches {
		if l.Result == nil {
			continue
		}
		for _, ls := range l.Result.Levels {
			if ls.Level != c {
				continue
			}
			limited = limited || ls.ClientLimited
			if ls.AcceptLength != nil {
				sum += *ls.AcceptLength
				n++
			}
		}
	}
	if n == 0 {
		return nil, limited
	}
	mean := sum / float64(n)
	return &mean, limited
}

// clientLimited flags a level whose client held freed slots empty for a
// noticeable share of the time, over every launch pooled: the client, not
// the server, may have set the pace.
func clientLimited(l *Level) bool {
	return l.PaceShare > DefaultClientPaceShare
}
