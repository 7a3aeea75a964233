// Package llamatest is a test server that speaks llama.cpp's llama-server
// HTTP dialect, for tests of engine: llamacpp without a model: /health (503
// "Loading model", then 200), /props (total_slots, build_info), slot erase
// (501 without --slot-save-path), /metrics with the llamacpp: prefix, and
// streaming completions whose final chunk carries usage with
// prompt_tokens_details.cached_tokens and timings with draft_n and
// draft_n_accepted. With a draft model it streams two tokens per step,
// as accepted drafts let a real one, so it is the faster side. The shapes
// follow llama.cpp's tools/server/README.md and server-context.cpp
// (docs/ENGINES.md cites each); the numbers are made up but consistent.
//
// It keeps a prefix cache the way the real server's slots do for what the
// tests look at: a prompt seen before is served from the cache (cached_tokens
// = its prompt tokens) until the slots are erased.
package llamatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Env is the variable that turns a test binary into this server (see Main).
const Env = "BAKEOFF_LLAMATEST"

// TokenGapEnv, a Go duration, sets Main's pause between streamed tokens
// (Config.TokenGap, a millisecond by default). A test that compares two
// launches' speeds on a loaded machine sets it longer, so that the pause
// rather than the scheduler's lateness paces the stream.
const TokenGapEnv = "BAKEOFF_LLAMATEST_TOKEN_GAP"

// PromptLogEnv names a file Main's server appends every request's prompt
// to, one LoggedPrompt a line, so a test can see exactly what a sweep sent.
const PromptLogEnv = "BAKEOFF_LLAMATEST_PROMPTS"

// Config is the subset of llama-server's flags the server honours.
type Config struct {
	Model        string
	Alias        string
	Slots        int  // --parallel
	SlotSavePath bool // --slot-save-path given: slot actions allowed
	Speculative  bool // --spec-type other than none, or --model-draft
	// LoadTime is how long /health answers 503 "Loading model".
	LoadTime time.Duration
	// TokenGap is the pause between streamed tokens.
	TokenGap time.Duration
	// PromptLog, when set, receives a LoggedPrompt line for every request.
	PromptLog io.Writer
}

// ParseArgs reads llama-server flags (unknown ones are skipped with their
// value when they have one) into a Config and the listen address.
func ParseArgs(args []string) (Config, string, error) {
	c := Config{Slots: 1, LoadTime: 300 * time.Millisecond, TokenGap: time.Millisecond}
	host, port := "127.0.0.1", "8080"
	for i := 0; i < len(args); i++ {
		flag := args[i]
		k := strings.TrimLeft(flag, "-")
		val := func() string {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				return args[i]
			}
			return ""
		}
		switch k {
		case "model", "m":
			c.Model = val()
		case "alias", "a":
			c.Alias = val()
		case "host":
			host = val()
		case "port":
			port = val()
		case "parallel", "np":
			n, err := strconv.Atoi(val())
			if err != nil {
				// std::stoi's exception, as llama-server reports it.
				return c, "", argError(flag, "stoi", parallelUsage)
			}
			if n < 1 {
				return c, "", argError(flag, "invalid value", parallelUsage)
			}
			c.Slots = n
		case "slot-save-path":
			// As common/arg.cpp: the path must be an existing directory.
			v := val()
			if fi, err := os.Stat(v); err != nil || !fi.IsDir() {
				return c, "", argError(flag, "not a directory: "+v, slotSavePathUsage)
			}
			c.SlotSavePath = v != ""
		case "spec-type":
			c.Speculative = val() != "none"
		case "model-draft", "md":
			c.Speculative = c.Speculative || val() != ""
		default:
			val()
		}
	}
	return c, net.JoinHostPort(host, port), nil
}

// The usage of the arguments the server refuses, as llama-server prints it.
const (
	parallelUsage = `-np,   --parallel N                     number of parallel sequences to decode (default: 1)
                                        (env: LLAMA_ARG_N_PARALLEL)
`
	slotSavePathUsage = `--slot-save-path PATH                   path to save slot kv cache (default: disabled)
`
)

// argError is llama-server's message for an argument its handler refused
// (common/arg.cpp): the argument and why, its usage, and a hint. The error
// comes first and the hint last, so a log's last line does not say what
// went wrong.
func argError(arg, why, usage string) error {
	return fmt.Errorf("error while handling argument \"%s\": %s\n\nusage:\n%s\n\nto show complete usage, run with -h", arg, why, usage)
}

// LoggedPrompt is one line of the prompt log: the prompt as the cache sees
// it (a chat's messages as "role: content" lines) and whether the answer
// was streamed (a sweep's requests are; the orchestrator's smoke test is
// not).
type LoggedPrompt struct {
	Prompt string `json:"prompt"`
	Stream bool   `json:"stream"`
}

// Server is one fake llama-server.
type Server struct {
	cfg   Config
	start time.Time

	mu     sync.Mutex
	cached map[string]bool // prompts in some slot's cache
	served int
	// predicted is tokens_predicted_total: as llama-server does, a
	// request's generated tokens are added when it ends, not as they are
	// generated (tools/server/server-context.cpp).
	predicted int
}

// New returns a server that starts loading now.
func New(cfg Config) *Server {
	return &Server{cfg: cfg, start: time.Now(), cached: map[string]bool{}}
}

// Handler routes llama-server's endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /v1/models", s.ready(s.models))
	mux.HandleFunc("GET /props", s.ready(s.props))
	mux.HandleFunc("GET /metrics", s.ready(s.metrics))
	mux.HandleFunc("POST /slots/{id}", s.ready(s.slotAction))
	mux.HandleFunc("POST /v1/completions", s.ready(s.completions(false)))
	mux.HandleFunc("POST /v1/chat/completions", s.ready(s.completions(true)))
	return mux
}

func (s *Server) loading() bool { return time.Since(s.start) < s.cfg.LoadTime }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func errorBody(msg, typ string, code int) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": msg, "type": typ}}
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	if s.loading() {
		writeJSON(w, http.StatusServiceUnavailable, errorBody("Loading model", "unavailable_error", 503))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// ready answers 503 "Loading model" until the model is loaded.
func (s *Server) ready(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.loading() {
			writeJSON(w, http.StatusServiceUnavailable, errorBody("Loading model", "unavailable_error", 503))
			return
		}
		h(w, r)
	}
}

func (s *Server) name() string {
	if s.cfg.Alias != "" {
		return s.cfg.Alias
	}
	return s.cfg.Model
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{{"id": s.name(), "object": "model", "owned_by": "llamacpp"}}})
}

func (s *Server) props(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"total_slots": s.cfg.Slots, "model_path": s.cfg.Model, "build_info": "b0000-llamatest",
		"default_generation_settings": map[string]any{"n_ctx": 4096}})
}

func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	n, predicted := s.served, s.predicted
	s.mu.Unlock()
	fmt.Fprintf(w, "# HELP llamacpp:requests_processing Number of requests processing.\n# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 0\n")
	fmt.Fprintf(w, "# HELP llamacpp:n_decode_total Total number of llama_decode() calls\n# TYPE llamacpp:n_decode_total counter\nllamacpp:n_decode_total %d\n", n)
	fmt.Fprintf(w, "# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.\n# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total %d\n", predicted)
}

// slotAction handles ?action=erase; save and restore are not simulated.
func (s *Server) slotAction(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 0 || id >= s.cfg.Slots {
		writeJSON(w, http.StatusBadRequest, errorBody("Invalid slot ID", "invalid_request_error", 400))
		return
	}
	if !s.cfg.SlotSavePath {
		writeJSON(w, http.StatusNotImplemented, errorBody("This server does not support slots action. Start it with `--slot-save-path`", "not_supported_error", 501))
		return
	}
	if r.URL.Query().Get("action") != "erase" {
		writeJSON(w, http.StatusBadRequest, errorBody("Invalid action", "invalid_request_error", 400))
		return
	}
	s.mu.Lock()
	n := len(s.cached)
	clear(s.cached) // one shared cache stands for every slot's
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id_slot": id, "n_erased": n})
}

type request struct {
	Prompt   string `json:"prompt"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	MaxTokens     int             `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions map[string]bool `json:"stream_options"`
}

func (s *Server) completions(chat bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody("bad JSON: "+err.Error(), "invalid_request_error", 400))
			return
		}
		prompt := req.Prompt
		for _, m := range req.Messages {
			prompt += m.Role + ": " + m.Content + "\n"
		}
		promptTokens := max(1, len(strings.Fields(prompt)))
		s.mu.Lock()
		cached := 0
		if s.cached[prompt] {
			cached = promptTokens
		}
		s.cached[prompt] = true
		s.served++
		if s.cfg.PromptLog != nil {
			line, _ := json.Marshal(LoggedPrompt{Prompt: prompt, Stream: req.Stream})
			s.cfg.PromptLog.Write(append(line, '\n'))
		}
		s.mu.Unlock()
		n := max(1, req.MaxTokens)
		defer func() {
			s.mu.Lock()
			s.predicted += n
			s.mu.Unlock()
		}()
		usage := map[string]any{"completion_tokens": n, "prompt_tokens": promptTokens, "total_tokens": n + promptTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": cached}}
		timings := map[string]any{"cache_n": cached, "prompt_n": promptTokens - cached, "prompt_ms": 1.5,
			"predicted_n": n, "predicted_ms": float64(n) * 1.1}
		if s.cfg.Speculative {
			// Half the tokens come from accepted drafts: two tokens per step.
			timings["draft_n"], timings["draft_n_accepted"] = n, n/2
		}
		if !req.Stream {
			text := strings.Repeat(" t", n)
			choice := map[string]any{"index": 0, "finish_reason": "length", "text": text}
			if chat {
				choice = map[string]any{"index": 0, "finish_reason": "length", "message": map[string]any{"role": "assistant", "content": text}}
			}
			writeJSON(w, http.StatusOK, map[string]any{"choices": []any{choice}, "model": s.name(), "usage": usage, "timings": timings})
			return
		}

		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		flush := func() {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		send := func(v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "data: %s\n\n", b)
			flush()
		}
		object, id := "text_completion", "cmpl-llamatest"
		if chat {
			object, id = "chat.completion.chunk", "chatcmpl-llamatest"
			// A role-only first chunk, content null.
			send(map[string]any{"choices": []any{map[string]any{"index": 0, "finish_reason": nil,
				"delta": map[string]any{"role": "assistant", "content": nil}}}, "object": object, "id": id, "model": s.name()})
		}
		for i := range n {
			// A target step per token; with a draft, every other token is
			// an accepted draft token that comes in the same step, so a
			// speculative server streams twice as fast.
			if !s.cfg.Speculative || i%2 == 0 {
				time.Sleep(s.cfg.TokenGap)
			}
			if r.Context().Err() != nil {
				return
			}
			piece := fmt.Sprintf(" t%d", i)
			choice := map[string]any{"index": 0, "finish_reason": nil, "text": piece}
			if chat {
				choice = map[string]any{"index": 0, "finish_reason": nil, "delta": map[string]any{"content": piece}}
			}
			send(map[string]any{"choices": []any{choice}, "object": object, "id": id, "model": s.name()})
		}
		final := map[string]any{"index": 0, "finish_reason": "length", "text": ""}
		if chat {
			final = map[string]any{"index": 0, "finish_reason": "length", "delta": map[string]any{}}
		}
		last := map[string]any{"choices": []any{final}, "object": object, "id": id, "model": s.name(), "timings": timings}
		if !chat {
			last["usage"] = usage
		}
		send(last)
		if chat && req.StreamOptions["include_usage"] {
			// The chat endpoint sends usage only when asked, as an extra
			// chunk with empty choices.
			send(map[string]any{"choices": []any{}, "object": object, "id": id, "model": s.name(), "usage": usage, "timings": timings})
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		flush()
	}
}

// Main serves as a fake llama-server when Env is set, with the process's
// arguments as llama-server flags, and reports whether it did; a test
// binary's TestMain calls it first so the binary can stand in for
// llama-server. It logs the real server's lines for the ready and
// failure paths, and exits on SIGTERM or SIGINT.
func Main() bool {
	if os.Getenv(Env) == "" {
		return false
	}
	if printHelp(os.Args[1:]) {
		os.Exit(0)
	}
	cfg, addr, err := ParseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if v := os.Getenv(TokenGapEnv); v != "" {
		gap, err := time.ParseDuration(v)
		if err != nil || gap < 0 {
			fmt.Fprintf(os.Stderr, "%s=%q: want a duration such as 5ms\n", TokenGapEnv, v)
			os.Exit(1)
		}
		cfg.TokenGap = gap
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "main: couldn't bind HTTP server socket, hostname: %s, port: %s\n", addr, addr)
		os.Exit(1)
	}
	if name := os.Getenv(PromptLogEnv); name != "" {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cfg.PromptLog = f
	}
	fmt.Fprintf(os.Stderr, "srv  load_model: loading model '%s'\n", cfg.Model)
	fmt.Fprintf(os.Stderr, "main: server is listening on http://%s - starting the main loop\n", addr)
	srv := &http.Server{Handler: New(cfg).Handler()}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "srv  operator(): operator: cleaning up before exit...")
		os.Exit(0)
	}()
	srv.Serve(ln)
	os.Exit(1)
	return true
}
