package verdicttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Scenario is one scenario of a run directory to write.
type Scenario struct {
	Name    string
	Status  string // results.StatusOK when empty
	Reason  string // for a failed scenario
	Records []measure.Record
	// AcceptLength is reported for speculative scenarios.
	AcceptLength *float64
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
	for _, s := range scenarios {
		st := s.Status
		if st == "" {
			st = results.StatusOK
		}
		sum.Scenarios = append(sum.Scenarios, results.ScenarioResult{Name: s.Name, Status: st, Attempt: 1,
			Fingerprint: m.Fingerprint, Reason: s.Reason, AcceptLength: s.AcceptLength,
			Started: m.Started, Ended: m.Started})
		if st == results.StatusFailed {
			continue
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, r := range s.Records {
			if err := enc.Encode(r); err != nil {
				return nil, fmt.Errorf("encoding records: %w", err)
			}
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, s.Name, results.RequestsFile), buf.Bytes()); err != nil {
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
