package notes_test

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// fairInput is a small two-scenario campaign whose variant can be broken.
func fairInput(t *testing.T, breakVariant func([]measure.Record) []measure.Record) records.Input {
	t.Helper()
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 4}
	in := verdicttest.PairInput(verdicttest.Simulate(verdicttest.Baseline, s, 1),
		breakVariant(verdicttest.Simulate(verdicttest.Baseline, s, 2)), s)
	in.Manifest.Fingerprint = "sha256:ff"
	in.Summary.Scenarios = []results.ScenarioResult{
		{Name: "baseline", Status: results.StatusOK, Fingerprint: "sha256:ff"},
		{Name: "variant", Status: results.StatusOK, Fingerprint: "sha256:ff"}}
	return in
}

func TestFairness(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(*records.Input)
		check    string
		severity string
		text     string
	}{
		{"all good: greedy passes, said so", func(*records.Input) {}, verdict.CheckGreedy, verdict.SeverityInfo, "equal the baseline's"},
		{"one greedy output differs, one launch each: said, not called a bug", func(in *records.Input) {
			for i := range in.Launches["variant"][0].Records {
				if in.Launches["variant"][0].Records[i].Prompt == 3 {
					in.Launches["variant"][0].Records[i].OutputHash = "changed"
				}
			}
		}, verdict.CheckGreedy, verdict.SeverityWarn, "outputs differ on 1 of"},
		{"every greedy output differs: a red line", func(in *records.Input) {
			for i := range in.Launches["variant"][0].Records {
				in.Launches["variant"][0].Records[i].OutputHash += "changed"
			}
		}, verdict.CheckGreedy, verdict.SeverityRed, "likely a speculative decoding bug"},
		{"failed requests are shown", func(in *records.Input) {
			r := &in.Launches["variant"][0].Records[10]
			r.ErrClass, r.Error, r.Tokens = measure.ErrTimeout, "deadline", 0
		}, verdict.CheckRequests, verdict.SeverityWarn, "1 of 30 requests failed (timeout 1)"},
		{"short outputs under ignore_eos", func(in *records.Input) {
			in.Launches["variant"][0].Records[12].Tokens = 17
		}, verdict.CheckTokens, verdict.SeverityWarn, "did not produce exactly max_tokens=200"},
		{"each request held to its own max_tokens (a trace row's output length)", func(in *records.Input) {
			for _, l := range []records.Launch{in.Launches["baseline"][0], in.Launches["variant"][0]} {
				for i := range l.Records {
					l.Records[i].MaxTokens, l.Records[i].Tokens = 7+i%5, 7+i%5
				}
			}
		}, verdict.CheckTokens, verdict.SeverityInfo, "every successful request produced the max_tokens each asked for"},
		{"short of its own max_tokens", func(in *records.Input) {
			for i := range in.Launches["variant"][0].Records {
				in.Launches["variant"][0].Records[i].MaxTokens = 300
			}
		}, verdict.CheckTokens, verdict.SeverityWarn, "did not produce exactly the max_tokens each asked for"},
		{"fingerprint differs", func(in *records.Input) {
			in.Summary.Scenarios[1].Fingerprint = "sha256:other"
		}, verdict.CheckFingerprint, verdict.SeverityRed, "not comparable"},
		{"prompt set differs", func(in *records.Input) {
			for i := range in.Launches["variant"][0].Records {
				in.Launches["variant"][0].Records[i].PromptSet = "sha256:elsewhere"
			}
		}, verdict.CheckFingerprint, verdict.SeverityRed, "sent prompt set"},
		{"failed scenario is listed", func(in *records.Input) {
			in.Summary.Scenarios[1].Status, in.Summary.Scenarios[1].Reason = results.StatusFailed, "NCCL error"
			delete(in.Launches, "variant")
		}, verdict.CheckScenario, verdict.SeverityRed, "variant failed: NCCL error"},
		{"concurrency not reached", func(in *records.Input) {
			// Stretch every send to its end's eve: requests barely overlap.
			for i := range in.Launches["variant"][0].Records {
				r := &in.Launches["variant"][0].Records[i]
				if r.Level == measure.ConcurrencyLevel(4) && !r.Warmup {
					d := r.EndNs - r.SendNs
					r.SendNs += d * 3 / 4
				}
			}
		}, verdict.CheckConcurrency, verdict.SeverityWarn, "requests in flight on average"},
		{"temperature above 0: outputs not compared", func(in *records.Input) {
			in.Manifest.Sweep.Temperature = 0.7
		}, verdict.CheckGreedy, verdict.SeverityInfo, "not compared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fairInput(t, func(r []measure.Record) []measure.Record { return r })
			tc.mutate(&in)
			v, err := judge.Records(in, verdict.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range v.Notes {
				if n.Check == tc.check && n.Severity == tc.severity && strings.Contains(n.Text, tc.text) {
					return
				}
			}
			t.Errorf("no %s %s note containing %q; notes:", tc.severity, tc.check, tc.text)
			for _, n := range v.Notes {
				t.Logf("  %s %s: %s", n.Severity, n.Check, n.Text)
			}
		})
	}
}
