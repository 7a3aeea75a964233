package server

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/model"
	"github.com/bakeoff-dev/bakeoff/sim/sglog"
)

// Server phases, as health reports them.
const (
	phaseLoading int32 = iota
	phaseReady
	phaseDraining
	// phaseStalled is a node whose group lost a peer: its ranks hang in a
	// collective until the watchdog ends the server (ranks.go).
	phaseStalled
)

// Version is what /server_info reports: the SGLang release line the sim
// follows (docs/SIM.md) with a local suffix that says it is the simulation.
const Version = "0.5.20+bakeoff.sim"

// Server is the HTTP face of the simulated engine.
type Server struct {
	cfg    *cmdline.Config
	log    *sglog.Logger
	stats  *model.Stats
	engine *model.Engine
	now    func() time.Time

	phase    atomic.Int32
	inflight atomic.Int64
	crashed  atomic.Bool  // crash-on-first-request has fired
	answered atomic.Int64 // completions answered in full (for crash-after)
	created  int64

	rngMu sync.Mutex
	rng   *rand.Rand

	dieOnce sync.Once
	dead    chan struct{} // closed when the server crashes (a fault)

	// kv is a prefill worker's bootstrap server, which its decode peers ask
	// for the KV cache of their requests (disagg.go); nil in other roles.
	kv *KVBootstrap
}

// New builds the server around an engine; kv is a prefill worker's
// bootstrap server (ListenBootstrap), nil in other roles. It answers health
// as loading until Ready.
func New(cfg *cmdline.Config, log *sglog.Logger, stats *model.Stats, engine *model.Engine, kv *KVBootstrap, seed uint64, now func() time.Time) *Server {
	s := &Server{
		cfg: cfg, log: log, stats: stats, engine: engine, now: now, kv: kv,
		created: now().Unix(),
		rng:     rand.New(rand.NewPCG(seed, seed^0x7e7)),
		dead:    make(chan struct{}),
	}
	return s
}

// Ready ends the load: health answers 200 from now on. It reports false
// when the server stalled first (a lost peer), and then stays stalled.
func (s *Server) Ready() bool { return s.phase.CompareAndSwap(phaseLoading, phaseReady) }

// Stall is a node whose group lost a peer: its ranks hang in a collective,
// and health fails, until the watchdog ends the server.
func (s *Server) Stall() { s.phase.Store(phaseStalled) }

// Drain stops admitting requests (SIGTERM); InFlight counts those still
// being answered.
func (s *Server) Drain() { s.phase.Store(phaseDraining) }

// InFlight is the number of requests being answered.
func (s *Server) InFlight() int64 { return s.inflight.Load() }

// Dead is closed when a fault has crashed the server.
func (s *Server) Dead() <-chan struct{} { return s.dead }

// die logs a crash and marks the server dead; the process then exits 1.
func (s *Server) die(text string) {
	s.dieOnce.Do(func() {
		s.log.Raw(text)
		close(s.dead)
	})
}

// Handler routes SGLang's HTTP surface.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /health_generate", s.health)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /get_model_info", s.modelInfo)
	mux.HandleFunc("GET /server_info", s.serverInfo)
	mux.HandleFunc("GET /get_server_info", s.deprecatedServerInfo)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("POST /v1/chat/completions", s.completions(true))
	mux.HandleFunc("POST /v1/completions", s.completions(false))
	mux.HandleFunc("POST /generate", s.generate)
	mux.HandleFunc("GET /flush_cache", s.flushCache)
	mux.HandleFunc("POST /flush_cache", s.flushCache)
	mux.HandleFunc("POST /v1/tokenize", s.tokenize)
	mux.HandleFunc("POST /tokenize", s.tokenize)
	return s.accessLog(mux)
}

// statusWriter remembers the status for the access log and passes Flush on.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// accessLog writes uvicorn's access line for every request.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if sw.status != 0 {
				s.log.Raw(fmt.Sprintf("INFO:     %s - \"%s %s HTTP/1.1\" %d %s", r.RemoteAddr, r.Method, r.URL.Path, sw.status, http.StatusText(sw.status)))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	if s.phase.Load() != phaseReady {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"object": "error", "message": msg, "type": http.StatusText(code), "code": code})
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []any{map[string]any{
			"id": s.cfg.ModelName(), "object": "model", "created": s.created, "owned_by": "sglang",
			"root": s.cfg.ModelPath, "max_model_len": s.cfg.ContextLength,
		}},
	})
}

func (s *Server) modelInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"model_path": s.cfg.ModelPath, "tokenizer_path": s.cfg.ModelPath, "is_generation": true,
		"preferred_sampling_params": nil, "weight_version": "default",
		"has_image_understanding": false, "has_audio_understanding": false,
	})
}

// deprecatedServerInfo is SGLang's old path, which still answers, with a
// warning in the log at every call (python/sglang/srt/entrypoints/
// http_server.py, get_server_info).
func (s *Server) deprecatedServerInfo(w http.ResponseWriter, r *http.Request) {
	s.log.Printf("Endpoint '/get_server_info' is deprecated and will be removed in a future version. Please use '/server_info' instead.")
	s.serverInfo(w, r)
}

func (s *Server) serverInfo(w http.ResponseWriter, _ *http.Request) {
	info := map[string]any{}
	for k, v := range cmdline.ServerArgs(s.cfg) {
		info[k] = v
	}
	state := map[string]any{"last_gen_throughput": s.stats.GenThroughput(), "memory_usage": map[string]any{}}
	if s.cfg.Speculative() {
		state["avg_spec_accept_length"] = s.stats.AvgAcceptLength()
	}
	info["internal_states"] = []any{state}
	info["version"] = Version
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	if !s.cfg.EnableMetrics {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	writePrometheus(w, s.stats.Snapshot(), s.cfg)
}

// admit gates a real completion: 503 unless ready, and the faults that fire
// on a request. It reports false when the request must not run.
func (s *Server) admit(w http.ResponseWriter) bool {
	if s.phase.Load() != phaseReady {
		writeError(w, http.StatusServiceUnavailable, "The server is not ready.")
		return false
	}
	if s.cfg.Sim.Faults.CrashOnFirstRequest && s.crashed.CompareAndSwap(false, true) {
		s.die(sglog.FirstRequestTraceback(s.now))
		s.hangUp()
	}
	return true
}

// answeredOne counts a completion answered in full; the crash-after fault
// fires once the count is reached, after the answer went out.
func (s *Server) answeredOne() {
	n := s.answered.Add(1)
	if k := s.cfg.Sim.Faults.CrashAfter; k > 0 && n >= int64(k) {
		s.die(sglog.CrashAfterTraceback(s.now))
	}
}

// hangUp waits for the crash to end the process, then drops the connection
// without an answer, as a dead server does.
func (s *Server) hangUp() {
	<-s.dead
	panic(http.ErrAbortHandler)
}

// Listen binds the server's address, with uvicorn's error when it is taken.
func Listen(cfg *cmdline.Config) (net.Listener, error) {
	return net.Listen("tcp", cfg.Addr())
}
