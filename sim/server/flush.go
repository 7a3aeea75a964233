package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// flushPoll is how often a /flush_cache?timeout=N waiting for the server to
// go idle tries again (wall time).
const flushPoll = 10 * time.Millisecond

// maxFlushWait bounds ?timeout= so that a huge value still waits, rather
// than overflowing a duration.
const maxFlushWait = 24 * time.Hour

// flushCache answers SGLang's GET or POST /flush_cache, which bakeoff sends
// before every level: it empties the prefix cache (python/sglang/srt/
// entrypoints/http_server.py, flush_cache). SGLang flushes only when no
// request is queued or running; otherwise it answers 400 with the
// scheduler's reason, at once, or, with ?timeout=N (seconds, ≥ 0), once N
// seconds have passed without the server going idle. The timeout is wall
// time: it is the client's patience, which --sim-speed does not scale.
// While loading the sim answers 503.
func (s *Server) flushCache(w http.ResponseWriter, r *http.Request) {
	timeout, bad := flushTimeout(r)
	if bad != nil {
		// FastAPI's validation of Query(0.0, ge=0.0).
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []any{bad}})
		return
	}
	if s.phase.Load() != phaseReady {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	deadline := time.Now().Add(timeout)
	refusal := s.engine.FlushCache()
	for refusal != "" && time.Now().Before(deadline) {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(min(flushPoll, time.Until(deadline))):
		}
		refusal = s.engine.FlushCache()
	}
	if refusal != "" {
		s.log.Rankf(0, "%s", refusal)
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, refusal)
		return
	}
	s.log.Rankf(0, "Cache flushed successfully!")
	fmt.Fprint(w, "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n")
}

// flushTimeout reads ?timeout= as FastAPI's float query parameter with
// ge=0: absent is 0; otherwise the error detail pydantic gives.
func flushTimeout(r *http.Request) (time.Duration, map[string]any) {
	v, ok := r.URL.Query()["timeout"]
	if !ok || len(v) == 0 {
		return 0, nil
	}
	raw := v[len(v)-1]
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || f != f {
		return 0, map[string]any{"type": "float_parsing", "loc": []string{"query", "timeout"},
			"msg": "Input should be a valid number, unable to parse string as a number", "input": raw}
	}
	if f < 0 {
		return 0, map[string]any{"type": "greater_than_equal", "loc": []string{"query", "timeout"},
			"msg": "Input should be greater than or equal to 0", "input": raw, "ctx": map[string]any{"ge": json.Number("0.0")}}
	}
	return time.Duration(min(f, maxFlushWait.Seconds()) * float64(time.Second)), nil
}
