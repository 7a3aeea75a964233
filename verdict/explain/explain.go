// Package explain adds to a decided verdict the figures that explain its
// outcomes, and decides nothing: each level's speculative accept length
// (accept.go), the server's own summary and timeline (server.go,
// timeline.go) and the GPU power and energy per 1000 tokens (energy.go);
// then, from the decided comparisons, each variant's crossover sentence
// (crossover.go), the figures behind its turn (why.go) and its break-even
// load (breakeven.go). It reads the verdict's exported fields only: the
// rule (package verdict) never reads what it writes.
package explain

import (
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// Levels fills in each measured level's figures that explain it rather
// than decide it: the speculative accept length, the server's own summary
// and timeline, and the GPU power and energy per token. It returns, per
// scenario, the levels left without an energy figure and why, for the
// notes. slices is the most within-launch samples one level repeat gives
// (verdict.Options.Slices).
func Levels(v *verdict.Verdict, in records.Input, slices int) map[string][]string {
	engines := scenarioEngines(in.Manifest)
	gaps := map[string][]string{}
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		if s.Failed() {
			continue
		}
		launches := in.Launches[s.Name]
		for j := range s.Levels {
			l := &s.Levels[j]
			if a := levelAccept(launches, l.Level, v.Confidence); a != nil {
				l.Accept, l.AcceptLength = a, new(a.Length.Center)
			}
			l.Server = serverLevel(launches, l.Level)
			l.Timeline = levelTimeline(launches, l.Level, serverMetrics(engines[s.Name]))
		}
		if gap := scenarioEnergy(s, launches, slices, v.Confidence); len(gap) > 0 {
			gaps[s.Name] = gap
		}
	}
	return gaps
}

// Crossovers says, for each variant, where it wins, ties and loses across
// the levels, from the decided comparisons, and explains each turn: the
// figures behind it (why.go) and the break-even load (breakeven.go). m is
// the run's manifest, for each scenario's engine.
func Crossovers(v *verdict.Verdict, m results.Manifest) {
	v.Crossovers = crossovers(v)
	explainCrossovers(v, scenarioEngines(m))
}
