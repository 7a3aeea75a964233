package verdicttest

import (
	"maps"
	"slices"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// OneLaunchEach is one launch (round 1) per scenario, in name order.
func OneLaunchEach(recs map[string][]measure.Record) map[string][]records.Launch {
	out := map[string][]records.Launch{}
	i := 0
	for _, name := range slices.Sorted(maps.Keys(recs)) {
		out[name] = []records.Launch{{Round: 1, Order: i, Records: recs[name]}}
		i++
	}
	return out
}

// PairInput is a baseline and a variant launched once each.
func PairInput(base, variant []measure.Record, s Sweep) records.Input {
	return records.Input{
		Manifest: results.Manifest{Campaign: "synthetic", Baseline: "baseline",
			Scenarios: []string{"baseline", "variant"},
			Sweep:     results.SweepInfo{MaxTokens: s.MaxTokens, IgnoreEOS: true, PromptSet: s.PromptSet}},
		Launches: OneLaunchEach(map[string][]measure.Record{"baseline": base, "variant": variant}),
	}
}

// CampaignInput is a simulated campaign of rounds as the verdict reads it:
// names[0] is the baseline, and each launch belongs to names[l.Scenario].
func CampaignInput(names []string, s Sweep, rounds int, launches []Launch) records.Input {
	in := records.Input{
		Manifest: results.Manifest{Campaign: "synthetic", Baseline: names[0], Scenarios: names, Rounds: rounds,
			Sweep: results.SweepInfo{MaxTokens: s.MaxTokens, IgnoreEOS: true, PromptSet: s.PromptSet}},
		Launches: map[string][]records.Launch{},
	}
	for _, l := range launches {
		name := names[l.Scenario]
		in.Launches[name] = append(in.Launches[name], records.Launch{Round: l.Round, Order: l.Order, Host: l.Host, Records: l.Records})
	}
	return in
}

// ServerLaunch is a launch whose only level, c, carries the server's own
// figures: the client's throughput, the server's generation rate and its
// mean running batch, each with a source.
func ServerLaunch(c measure.Level, client, gen, running float64) records.Launch {
	ls := measure.LevelSummary{Level: c, Throughput: client, Server: &measure.ServerSummary{Scrapes: 10,
		GenTokS: &measure.ServerFigure{Value: gen, Source: "rate(g) over the window"},
		Running: &measure.GaugeStats{Mean: running, P50: running, Max: running, Source: "r"}}}
	return records.Launch{Result: &results.ScenarioResult{Levels: []measure.LevelSummary{ls}}}
}
