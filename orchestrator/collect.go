package orchestrator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/bakeoff-dev/bakeoff/results"
)

// FinalMetricsFile is the /metrics scrape collect writes into SCENARIO/metrics/,
// beside the engine's info answer (its profile names that file, e.g.
// server_info.json for SGLang).
const FinalMetricsFile = "final.prom"

// collect records what the server says about itself after the sweep (a
// deployment's figures role, when it serves from a router): its
// version (and SGLang's own running accept length) from the engine profile's
// info call, and a final /metrics scrape. A server without these endpoints
// is not a failure: the measurement already stands, so each miss is a warning.
func collect(ctx context.Context, s *scenarioRun) error {
	info := s.profile.Info
	s.result.FiguresFrom = s.figuresRole
	furl, fc := s.figuresAt()
	dir := filepath.Join(s.dir, results.MetricsDir)
	if err := os.MkdirAll(dir, results.DirMode); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if info != nil {
		path, status, body, err := info.Ask(func(path string) (int, []byte, error) {
			return get(ctx, fc, furl+path, DefaultProbeTimeout)
		})
		switch {
		case err != nil:
			s.warn(fmt.Sprintf("collecting %s from %s: %v", path, s.w.h.Name(), err))
		case status != http.StatusOK:
			s.warn(fmt.Sprintf("collecting %s from %s: status %d", path, s.w.h.Name(), status))
		default:
			if err := results.WriteFileAtomic(filepath.Join(dir, info.File), body); err != nil {
				return err
			}
			in := info.Parse(body)
			s.result.EngineVersion, s.result.AcceptLength = in.Version, in.AcceptLength
		}
	}
	status, body, err := get(ctx, fc, furl+"/metrics", DefaultProbeTimeout)
	if err == nil && status == http.StatusOK {
		if err := results.WriteFileAtomic(filepath.Join(dir, FinalMetricsFile), body); err != nil {
			return err
		}
	}
	if s.dep != nil {
		return collectRoles(ctx, s)
	}
	return nil
}

// figuresAt is where the engine's own figures are read: the figures role's
// instance when a deployment serves from a router, else the server the
// load goes to.
func (s *scenarioRun) figuresAt() (string, *http.Client) {
	if s.figuresURL == "" || s.figuresClient == nil {
		return s.baseURL, s.client
	}
	return s.figuresURL, s.figuresClient
}
