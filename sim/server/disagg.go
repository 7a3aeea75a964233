package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/model"
	"github.com/bakeoff-dev/bakeoff/sim/sglog"
)

// Prefill-decode disaggregation, as SGLang runs it (docs/advanced_features/
// pd_disaggregation.md; python/sglang/srt/disaggregation/prefill.py and
// decode.py): the router sends each request to a prefill worker and a decode
// worker at once, with the prefill worker's bootstrap address and a room
// number added (bootstrap_host, bootstrap_port, bootstrap_room). The prefill
// worker computes the prompt and its first token and sends the KV cache to
// the decode worker, which then decodes the rest and streams the answer.
//
// In the sim the prefill worker runs each request to its first token only
// (its engine never decodes) and marks the request's room done; its bootstrap
// server, on --disaggregation-bootstrap-port, answers a decode worker that
// asks for the room once the prompt is prefilled. The decode worker waits
// for that answer, then for the KV transfer (model.KVTransferTime), then admits the
// request without a forward (Perf.decodeOnly): its first token goes out at
// once and the rest follow as its decode steps run. A decode worker's steps
// are never interrupted by a prefill, which is the point of the design, and
// its requests pay the transfer and the prefill worker's queue, which is its
// cost.

const (
	// KVWaitTimeout bounds (wall time) how long a decode worker waits for
	// its request's prefill, as SGLang's bootstrap and waiting timeouts end
	// a request whose prefill never comes.
	KVWaitTimeout = 5 * time.Minute
	// kvRoomTTL is how long (wall time) a prefilled room waits for its
	// decode worker before it is forgotten.
	kvRoomTTL = time.Minute
	// kvPathPrefix is the bootstrap server's path where a decode worker asks
	// for a room: the sim's own, beside SGLang's /route and /health.
	kvPathPrefix = "/sim/kv/"
)

// bootstrapFields are what the router adds to a disaggregated request.
type bootstrapFields struct {
	BootstrapHost string  `json:"bootstrap_host"`
	BootstrapPort *int    `json:"bootstrap_port"`
	BootstrapRoom *uint64 `json:"bootstrap_room"`
}

// kvRoom is one request's prefill as its decode worker waits for it.
type kvRoom struct {
	done         chan struct{}
	ok           bool // prefilled (false: the prefill was cut off)
	promptTokens int
	closed       time.Time // when done closed (wall); zero while open
}

// KVBootstrap is a prefill worker's bootstrap server and its rooms.
type KVBootstrap struct {
	ln    net.Listener
	hs    *http.Server
	mu    sync.Mutex
	rooms map[uint64]*kvRoom
}

// ListenBootstrap starts a prefill worker's bootstrap server on --host and
// --disaggregation-bootstrap-port.
func ListenBootstrap(cfg *cmdline.Config, log *sglog.Logger) (*KVBootstrap, error) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Deploy.BootstrapPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Raw("OSError: [Errno 98] Address already in use\n" +
			fmt.Sprintf("ERROR:    bootstrap server: [Errno 98] error while attempting to bind on address ('%s', %d): address already in use", cfg.Host, cfg.Deploy.BootstrapPort))
		return nil, fmt.Errorf("binding the bootstrap server on %s: %w", addr, err)
	}
	b := &KVBootstrap{ln: ln, rooms: map[uint64]*kvRoom{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "OK") })
	mux.HandleFunc("GET "+kvPathPrefix+"{room}", b.serveRoom)
	b.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go b.hs.Serve(ln)
	log.Printf("bakeoff sim: prefill bootstrap server on %s", addr)
	return b, nil
}

// Close stops the bootstrap server.
func (b *KVBootstrap) Close() { b.hs.Close() }

// room returns the room, creating it for whichever side comes first, and
// forgets rooms prefilled long ago that no decode worker asked for.
func (b *KVBootstrap) room(id uint64) *kvRoom {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, r := range b.rooms {
		if !r.closed.IsZero() && time.Since(r.closed) > kvRoomTTL {
			delete(b.rooms, k)
		}
	}
	r, ok := b.rooms[id]
	if !ok {
		r = &kvRoom{done: make(chan struct{})}
		b.rooms[id] = r
	}
	return r
}

// finish marks a request's room prefilled (ok) or cut off; a nil server or
// room does nothing.
func (b *KVBootstrap) finish(id *uint64, promptTokens int, ok bool) {
	if b == nil || id == nil {
		return
	}
	r := b.room(*id)
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.closed.IsZero() {
		r.ok, r.promptTokens, r.closed = ok, promptTokens, time.Now()
		close(r.done)
	}
}

// serveRoom answers a decode worker once the room's prompt is prefilled:
// 200 with the prompt's tokens, 410 when the prefill was cut off, 504 when
// it never came.
func (b *KVBootstrap) serveRoom(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.PathValue("room"), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad bootstrap room: "+r.PathValue("room"))
		return
	}
	room := b.room(id)
	t := time.NewTimer(KVWaitTimeout)
	defer t.Stop()
	select {
	case <-room.done:
	case <-t.C:
		writeError(w, http.StatusGatewayTimeout, fmt.Sprintf("bootstrap room %d: no prefill within %v", id, KVWaitTimeout))
		return
	case <-r.Context().Done():
		return
	}
	b.mu.Lock()
	delete(b.rooms, id)
	b.mu.Unlock()
	if !room.ok {
		writeError(w, http.StatusGone, fmt.Sprintf("bootstrap room %d: the prefill was aborted", id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"room": id, "prompt_tokens": room.promptTokens})
}

// disaggregate prepares a request for this server's role before it runs: a
// prefill worker stops it at its first token and marks its room once
// prefilled; a decode worker waits for its prefill and the KV transfer. It
// answers the request itself and reports false when it must not run.
func (s *Server) disaggregate(w http.ResponseWriter, r *http.Request, st *stream, b bootstrapFields) bool {
	switch {
	case s.cfg.Deploy.Prefill():
		st.firstOnly = true
		st.room = b.BootstrapRoom
		return true
	case !s.cfg.Deploy.Decode():
		return true
	}
	st.obs.start = s.now()
	if b.BootstrapRoom == nil || b.BootstrapHost == "" || b.BootstrapPort == nil {
		writeError(w, http.StatusBadRequest, "a decode worker needs bootstrap_host, bootstrap_port and bootstrap_room: send requests through the router")
		return false
	}
	tokens, err := s.awaitPrefill(r.Context(), b)
	if err == nil {
		err = pause.For(r.Context(), time.Duration(float64(model.KVTransferTime(tokens))/s.cfg.Sim.Speed))
	}
	if err != nil {
		if r.Context().Err() == nil {
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("KV transfer failed for request room=%d: %v", *b.BootstrapRoom, err))
		}
		return false
	}
	return true
}

// awaitPrefill asks the prefill worker's bootstrap server for the room and
// returns the prompt's tokens once it is prefilled.
func (s *Server) awaitPrefill(ctx context.Context, b bootstrapFields) (int, error) {
	url := "http://" + net.JoinHostPort(b.BootstrapHost, strconv.Itoa(*b.BootstrapPort)) + kvPathPrefix + strconv.FormatUint(*b.BootstrapRoom, 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("asking %s: %w", url, err)
	}
	defer resp.Body.Close()
	var body struct {
		PromptTokens int    `json:"prompt_tokens"`
		Message      string `json:"message"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("reading %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, errors.New(body.Message)
	}
	return body.PromptTokens, nil
}
