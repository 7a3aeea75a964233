package sim

import (
	"fmt"
	"net/http"
)

// flushCache answers SGLang's POST /flush_cache, which bakeoff sends before
// every level. The simulator keeps no prefix cache, so there is nothing to
// clear; like SGLang it refuses while the server is not serving.
func (s *Server) flushCache(w http.ResponseWriter, _ *http.Request) {
	if s.phase.Load() != phaseReady {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "Cache flushed.")
}
