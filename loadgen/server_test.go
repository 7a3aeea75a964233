package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// script is how a test server answers one streaming request.
type script struct {
	chunks         int           // content chunks
	tokensPerChunk int           // tokens each carries (default 1)
	ttft           time.Duration // before the first content chunk
	gap            time.Duration // between content chunks (per chunk)
	roleFirst      bool          // send a role-only chunk immediately
	keepAlive      bool          // interleave SSE comments and other fields
	crlf           bool          // \r\n line endings
	noUsage        bool
	noDone         bool
	holdAfterDone  time.Duration // keep the response open this long after [DONE]
	cutAfter       int           // close the connection after this many chunks (0: never)
	finish         string
	completions    bool // /v1/completions chunk shape
	status         int  // non-200: answer with this and a body
	// timings, when set, is a llama.cpp timings object sent with the usage.
	timings     string
	inFlight    *atomic.Int64
	maxInFlight *atomic.Int64
	// times, when set, gets what the server saw of its own timing.
	times *serverTimes
}

// serverTimes is what the server saw of its own timing, on the records'
// clock (nowNs): what a test compares the records with where the script
// alone would not do, because a loaded machine runs it late.
type serverTimes struct {
	mu sync.Mutex
	// done is taken just before each answer's [DONE] is written, so before
	// the client can read it; closed when the handler returns after holding
	// the response open, so before the client can read the response's end.
	// Both in the order the requests arrived.
	done, closed []int64
	// late is the most any scripted wait ended after its time: how late
	// this process wakes a goroutine whose wait is over, as the client's
	// own reads and sends are woken.
	late time.Duration
}

func (st *serverTimes) woke(late time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.late = max(st.late, late)
}

func (st *serverTimes) ended(done, closed int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done, st.closed = append(st.done, done), append(st.closed, closed)
}

// ends returns the answers' done and closed times.
func (st *serverTimes) ends() (done, closed []int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.done), slices.Clone(st.closed)
}

// lag returns the latest wake-up seen.
func (st *serverTimes) lag() time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.late
}

// serve writes one streamed answer following the script. Chunk times are
// scheduled from the request's arrival, so delays do not accumulate drift.
func (sc script) serve(w http.ResponseWriter, r *http.Request) {
	if sc.inFlight != nil {
		n := sc.inFlight.Add(1)
		defer sc.inFlight.Add(-1)
		for {
			m := sc.maxInFlight.Load()
			if n <= m || sc.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
	}
	// Reading the body lets the server notice a client that hangs up.
	io.Copy(io.Discard, r.Body)
	if sc.status != 0 && sc.status != http.StatusOK {
		http.Error(w, `{"error":"overloaded"}`, sc.status)
		return
	}
	start := time.Now()
	tpc := max(sc.tokensPerChunk, 1)
	eol := "\n"
	if sc.crlf {
		eol = "\r\n"
	}
	fl := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(data string) {
		if sc.keepAlive {
			fmt.Fprintf(w, ": keep-alive%sid: 7%sevent: message%s", eol, eol, eol)
		}
		fmt.Fprintf(w, "data: %s%s%s", data, eol, eol)
		fl.Flush()
	}
	if sc.roleFirst {
		send(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
	}
	for i := 0; i < sc.chunks; i++ {
		at := sc.ttft + time.Duration(i)*sc.gap
		select {
		case <-time.After(time.Until(start.Add(at))):
		case <-r.Context().Done():
			return // the client gave up
		}
		if sc.times != nil {
			sc.times.woke(time.Since(start.Add(at)))
		}
		if sc.keepAlive {
			fmt.Fprintf(w, ":%s%s", eol, eol)
		}
		if sc.cutAfter > 0 && i == sc.cutAfter {
			hj, ok := w.(http.Hijacker)
			if !ok {
				panic("no hijacker")
			}
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		text := strings.Repeat("tok ", tpc)
		var fin any
		if i == sc.chunks-1 {
			f := sc.finish
			if f == "" {
				f = "length"
			}
			fin = f
		}
		var c any
		if sc.completions {
			c = map[string]any{"choices": []any{map[string]any{"index": 0, "text": text, "finish_reason": fin}}}
		} else {
			c = map[string]any{"choices": []any{map[string]any{"index": 0,
				"delta": map[string]any{"content": text}, "finish_reason": fin}}}
		}
		b, _ := json.Marshal(c)
		send(string(b))
	}
	if !sc.noUsage {
		timings := ""
		if sc.timings != "" {
			timings = `,"timings":` + sc.timings
		}
		send(fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}%s}`,
			sc.chunks*tpc, 12+sc.chunks*tpc, timings))
	}
	done := nowNs()
	if !sc.noDone {
		send("[DONE]")
	}
	if sc.holdAfterDone > 0 {
		select {
		case <-time.After(sc.holdAfterDone):
		case <-r.Context().Done():
		}
	}
	if sc.times != nil {
		sc.times.ended(done, nowNs())
	}
}

// newServer starts an OpenAI-compatible server on 127.0.0.1 that answers
// every completion with sc and lists one model.
func newServer(t testing.TB, sc script) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"test-model","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", sc.serve)
	mux.HandleFunc("/v1/completions", sc.serve)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
