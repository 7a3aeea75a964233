package sim

import (
	"fmt"
	"net/http"
)

// flushCache answers SGLang's POST /flush_cache, which bakeoff sends before
// every level: it empties the prefix cache. Like SGLang it refuses while the
// server is not serving (503) and while any request is queued or running
// (400: SGLang's scheduler flushes only when its waiting queue and running
// batch are empty, and the HTTP handler answers 400 when it did not).
// Without the cache (--sim-prefix-cache not given) there is nothing to
// refuse for, and it answers 200 as it always did.
func (s *Server) flushCache(w http.ResponseWriter, _ *http.Request) {
	if s.phase.Load() != phaseReady {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if !s.engine.FlushCache() {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintln(w, "Cache not flushed: there are running or waiting requests.")
		return
	}
	fmt.Fprintln(w, "Cache flushed.")
}
