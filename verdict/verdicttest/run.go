package verdicttest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/slo"
)

// Scenario is one scenario of a run directory to write.
type Scenario struct {
	Name    string
	Status  string // results.StatusOK when empty
	Reason  string // for a failed scenario
	Records []measure.Record
	// Rounds, when set, are the records of each round's launch (Records is
	// then ignored): written as SCENARIO/round-K/, as a run with rounds is.
	// A nil round is a launch that failed.
	Rounds [][]measure.Record
	// Cut are the rounds (1-based) whose launch was interrupted before it
	// finished: recorded pending, with whatever records Rounds gives it.
	Cut []int
	// Hosts, when set, name the host of each round's launch
	// (results.ScenarioResult.HostName), in round order.
	Hosts []string
	// AcceptLength is reported for speculative scenarios.
	AcceptLength *float64
	// Speculative records each request's verify steps, as SGLang's
	// responses give them (speculate).
	Speculative bool
	// Server writes each launch's server timeline and its level summaries,
	// as a sweep against a server with /metrics does (serverTimeline), for
	// a server of MaxRunning slots (256 when zero).
	Server     bool
	MaxRunning int
}

// Manifest returns a manifest for a campaign of the sweep s.
func Manifest(campaign, run, fingerprint, baseline string, s Sweep, names ...string) results.Manifest {
	return results.Manifest{Campaign: campaign, Run: run, Fingerprint: fingerprint, Baseline: baseline,
		Scenarios: names, Started: time.Unix(epochNs/1e9, 0).UTC(),
		Sweep: results.SweepInfo{Concurrency: s.Concurrency, Requests: s.Requests, MaxTokens: s.MaxTokens,
			Warmup: s.Warmup, Temperature: 0, IgnoreEOS: true, Endpoint: "chat", Repeats: max(s.Repeats, 1),
			PromptSet: s.PromptSet}}
}

// WriteRun writes a run directory as the orchestrator lays it out
// (manifest.json, summary.json, SCENARIO/requests.jsonl) and reads it back.
func WriteRun(dir string, m results.Manifest, scenarios []Scenario) (*results.Run, error) {
	sum := results.Summary{Campaign: m.Campaign, Run: m.Run, Fingerprint: m.Fingerprint,
		Baseline: m.Baseline, Updated: m.Started}
	write := func(rel string, recs []measure.Record) error {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, r := range recs {
			if err := enc.Encode(r); err != nil {
				return fmt.Errorf("encoding records: %w", err)
			}
		}
		return results.WriteFileAtomic(filepath.Join(dir, filepath.FromSlash(rel), results.RequestsFile), buf.Bytes())
	}
	for _, s := range scenarios {
		st := s.Status
		if st == "" {
			st = results.StatusOK
		}
		if len(s.Rounds) > 0 {
			for k, recs := range s.Rounds {
				round, rst := k+1, st
				switch {
				case slices.Contains(s.Cut, round):
					rst = results.StatusPending
				case recs == nil:
					rst = results.StatusFailed
				}
				rel := results.LaunchDir(s.Name, round)
				var host string
				if k < len(s.Hosts) {
					host = s.Hosts[k]
				}
				sum.Scenarios = append(sum.Scenarios, results.ScenarioResult{Name: s.Name, Status: rst, Attempt: 1,
					HostName: host, Fingerprint: m.Fingerprint, Reason: s.Reason, AcceptLength: s.AcceptLength,
					Started: m.Started, Ended: m.Started, Round: round, Dir: rel})
				if rst == results.StatusFailed {
					continue
				}
				if s.Speculative {
					recs = speculate(recs)
				}
				if err := write(rel, recs); err != nil {
					return nil, err
				}
				if s.Server {
					levels, err := serverTimeline(filepath.Join(dir, filepath.FromSlash(rel)), recs, cmp.Or(s.MaxRunning, 256))
					if err != nil {
						return nil, err
					}
					sum.Scenarios[len(sum.Scenarios)-1].Levels = levels
				}
			}
			continue
		}
		sum.Scenarios = append(sum.Scenarios, results.ScenarioResult{Name: s.Name, Status: st, Attempt: 1,
			Fingerprint: m.Fingerprint, Reason: s.Reason, AcceptLength: s.AcceptLength,
			Started: m.Started, Ended: m.Started})
		if st == results.StatusFailed {
			continue
		}
		if err := write(s.Name, s.Records); err != nil {
			return nil, err
		}
	}
	if err := results.WriteJSONAtomic(filepath.Join(dir, results.ManifestFile), m); err != nil {
		return nil, err
	}
	if err := results.WriteJSONAtomic(filepath.Join(dir, results.SummaryFile), sum); err != nil {
		return nil, err
	}
	return results.ReadRun(dir)
}

// WriteCampaign simulates a campaign of engines (one scenario named by
// names each, in order) over rounds rounds of the sweep s, drawn from seed,
// and writes it as a run directory in dir whose manifest records the
// scenarios' GPU counts (nil: none) and the objective o (nil: none).
func WriteCampaign(dir string, names []string, engines []Engine, s Sweep, rounds int, seed uint64, counts map[string]int, o *slo.SLO) (*results.Run, error) {
	ls := Campaign(engines, s, rounds, seed)
	m := Manifest(names[0], "run", "sha256:"+names[0], names[0], s, names...)
	m.Rounds, m.ScenarioGPUs, m.SLO = rounds, counts, o
	scenarios := make([]Scenario, len(names))
	for i, name := range names {
		scenarios[i] = Scenario{Name: name, Rounds: make([][]measure.Record, rounds)}
	}
	for _, l := range ls {
		scenarios[l.Scenario].Rounds[l.Round-1] = l.Records
	}
	return WriteRun(dir, m, scenarios)
}
