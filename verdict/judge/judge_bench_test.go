package judge

import (
	"testing"

	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// benchInput is a seeds-shaped night in memory: the baseline and two
// variants, the seeds' eight levels, six rounds.
func benchInput(b *testing.B) records.Input {
	b.Helper()
	s := verdicttest.DefaultSweep()
	engines := []verdicttest.Engine{verdicttest.RealisticNoise(verdicttest.Baseline),
		verdicttest.RealisticNoise(verdicttest.Eagle3TopK4), verdicttest.RealisticNoise(verdicttest.Baseline)}
	names := []string{"baseline", "eagle3", "twin"}
	return verdicttest.CampaignInput(names, s, 6, verdicttest.Campaign(engines, s, 6, 1))
}

// BenchmarkRecords is the whole verdict of the night, what the report
// computes; BenchmarkDecideRun the rule's part alone, what a sequential
// look needs (docs/PERFORMANCE.md).
func BenchmarkRecords(b *testing.B) {
	in := benchInput(b)
	for b.Loop() {
		if _, err := Records(in, verdict.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecideRun(b *testing.B) {
	in := benchInput(b)
	for b.Loop() {
		if _, err := verdict.DecideRun(in, verdict.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecideRunSequential is the rule's part under a sequential plan
// (3 to 8 rounds): every look replayed, as the report and each live look
// do.
func BenchmarkDecideRunSequential(b *testing.B) {
	in := benchInput(b)
	o := verdict.Options{Sequential: &verdict.SequentialPlan{MinRounds: 3, MaxRounds: 8}}
	for b.Loop() {
		if _, err := verdict.DecideRun(in, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecideRunSequentialProfile is BenchmarkDecideRunSequential with
// a host's noise profile, whose loan each test of a look takes only where
// it narrows the boundary (verdict.LoanNarrows): the choice's price.
func BenchmarkDecideRunSequentialProfile(b *testing.B) {
	in := benchInput(b)
	o := verdict.Options{Sequential: &verdict.SequentialPlan{MinRounds: 3, MaxRounds: 8},
		Prior: &verdict.NoisePrior{Var: 0.02 * 0.02, DF: 40, Source: "bench"}}
	for b.Loop() {
		if _, err := verdict.DecideRun(in, o); err != nil {
			b.Fatal(err)
		}
	}
}
