// Package keepalive makes an HTTP server close its kept-alive connections
// the way some real servers and proxies do, so that tests and the simulated
// engine can show how a client copes:
//
//   - after a streamed response: llama.cpp's llama-server answers a streamed
//     request with `Keep-Alive: timeout=5, max=100` and then closes the
//     connection (issue 12);
//   - after a short idle time: servers and proxies close, or silently
//     forget, connections left idle.
//
// Either way a client that sends its next request on such a connection
// learns only then that it is closed, and gets no byte of an answer. To make
// that happen every time rather than when a race is lost, the server here
// reads the next request and then closes the connection without answering.
package keepalive

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"
)

// Policy says when a kept-alive connection is closed. The zero Policy never
// closes one.
type Policy struct {
	// AfterStream closes a connection after every streamed
	// (text/event-stream) response, and advertises keep-alive on those
	// responses as llama-server does.
	AfterStream bool
	// Idle closes a connection that has sat this long without a request
	// since its last response; 0: never.
	Idle time.Duration
}

// Closer applies a Policy to one server.
type Closer struct {
	policy Policy
	mu     sync.Mutex
	// dropped counts, by method, the requests that arrived on a connection
	// the policy had closed, and were answered only by its closing.
	dropped map[string]int
}

// New returns a Closer for p.
func New(p Policy) *Closer { return &Closer{policy: p, dropped: map[string]int{}} }

// Dropped is how many requests with this method (POST, GET, …) arrived on a
// connection the policy had closed, and were answered only by its closing.
func (c *Closer) Dropped(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped[method]
}

// AllDropped is Dropped for every method, by method.
func (c *Closer) AllDropped() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.dropped)
}

type connKey struct{}

// Install makes srv follow the policy on the connections of ln, and returns
// the listener srv must serve. It sets srv.ConnContext and wraps
// srv.Handler.
func (c *Closer) Install(srv *http.Server, ln net.Listener) net.Listener {
	next := srv.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	srv.Handler = c.handler(next)
	srv.ConnContext = func(ctx context.Context, nc net.Conn) context.Context {
		if cc, ok := nc.(*conn); ok {
			return context.WithValue(ctx, connKey{}, cc)
		}
		return ctx
	}
	return &listener{Listener: ln, c: c}
}

// handler notes the end of each response on its connection. It runs before
// the server writes the end of a chunked response, so the mark is set
// before the client can send its next request.
func (c *Closer) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.policy.AfterStream {
			w.Header().Set("Keep-Alive", "timeout=5, max=100")
		}
		next.ServeHTTP(w, r)
		cc, ok := r.Context().Value(connKey{}).(*conn)
		if !ok {
			return
		}
		cc.mu.Lock()
		cc.idleSince = time.Now()
		if c.policy.AfterStream && w.Header().Get("Content-Type") == "text/event-stream" {
			cc.closeNext = true
		}
		cc.mu.Unlock()
	})
}

type listener struct {
	net.Listener
	c *Closer
}

func (l *listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: nc, c: l.c}, nil
}

// conn closes itself when the first bytes of a request arrive on it after
// the policy closed it.
type conn struct {
	net.Conn
	c         *Closer
	mu        sync.Mutex
	idleSince time.Time // end of the last response; zero while a request is open
	closeNext bool
}

func (cc *conn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	if n == 0 {
		return n, err
	}
	cc.mu.Lock()
	idle := cc.c.policy.Idle
	drop := cc.closeNext || (idle > 0 && !cc.idleSince.IsZero() && time.Since(cc.idleSince) >= idle)
	cc.closeNext, cc.idleSince = false, time.Time{}
	cc.mu.Unlock()
	if drop {
		// The server may read one byte at a time (its background read);
		// read on to the end of the method, for Dropped.
		line := append([]byte(nil), p[:n]...)
		cc.Conn.SetReadDeadline(time.Now().Add(time.Second))
		for !bytes.Contains(line, []byte(" ")) && len(line) < 16 {
			var b [16]byte
			m, err := cc.Conn.Read(b[:])
			line = append(line, b[:m]...)
			if err != nil {
				break
			}
		}
		method, _, _ := bytes.Cut(line, []byte(" "))
		cc.c.mu.Lock()
		cc.c.dropped[string(method)]++
		cc.c.mu.Unlock()
		cc.Conn.Close()
		return 0, io.EOF
	}
	return n, err
}
