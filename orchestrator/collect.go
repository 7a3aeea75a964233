package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/bakeoff-dev/bakeoff/results"
)

// Files collect writes into SCENARIO/metrics/.
const (
	ServerInfoFile   = "get_server_info.json"
	FinalMetricsFile = "final.prom"
)

// collect records what the server says about itself after the sweep: its
// version and arguments (/get_server_info), the speculative accept length,
// and a final /metrics scrape. A server without these endpoints is not a
// failure: the measurement already stands, so each miss is a warning.
func collect(ctx context.Context, s *scenarioRun) error {
	o := s.o
	if o.opt.DryRun {
		s.event(Event{Kind: EventDryCommand, Phase: "collect", Message: "GET " + s.baseURL + "/get_server_info, GET " + s.baseURL + "/metrics"})
		return nil
	}
	dir := filepath.Join(s.dir, results.MetricsDir)
	if err := os.MkdirAll(dir, results.DirMode); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	status, body, err := get(ctx, s.client, s.baseURL+"/get_server_info", DefaultProbeTimeout)
	switch {
	case err != nil:
		o.warn(s.sc.Name, fmt.Sprintf("collecting /get_server_info from %s: %v", o.h.Name(), err))
	case status != http.StatusOK:
		o.warn(s.sc.Name, fmt.Sprintf("collecting /get_server_info from %s: status %d", o.h.Name(), status))
	default:
		if err := results.WriteFileAtomic(filepath.Join(dir, ServerInfoFile), body); err != nil {
			return err
		}
		s.result.EngineVersion, s.result.AcceptLength = parseServerInfo(body)
	}
	status, body, err = get(ctx, s.client, s.baseURL+"/metrics", DefaultProbeTimeout)
	if err == nil && status == http.StatusOK {
		if err := results.WriteFileAtomic(filepath.Join(dir, FinalMetricsFile), body); err != nil {
			return err
		}
	}
	return nil
}

// parseServerInfo reads SGLang's version and its cumulative speculative
// accept length (internal_states[0].avg_spec_accept_length) when present.
func parseServerInfo(body []byte) (version string, accept *float64) {
	var info struct {
		Version        string `json:"version"`
		InternalStates []struct {
			AvgSpecAcceptLength *float64 `json:"avg_spec_accept_length"`
		} `json:"internal_states"`
	}
	if json.Unmarshal(body, &info) != nil {
		return "", nil
	}
	if len(info.InternalStates) > 0 {
		accept = info.InternalStates[0].AvgSpecAcceptLength
	}
	return info.Version, accept
}
