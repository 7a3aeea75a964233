package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/keepalive"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// newClosingServer is newServer behind a keep-alive policy.
func newClosingServer(t *testing.T, sc script, p keepalive.Policy) (*httptest.Server, *keepalive.Closer) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"test-model","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", sc.serve)
	srv := httptest.NewUnstartedServer(mux)
	c := keepalive.New(p)
	srv.Listener = c.Install(srv.Config, srv.Listener)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, c
}

// sweepRecords runs a sweep and returns its records, failing on an error.
func sweepRecords(t *testing.T, o Options) []measure.Record {
	t.Helper()
	rec, recs := collect()
	o.Records = rec
	o.Prompts = testPrompts(t)
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return recs()
}

// checkRetried checks that no request failed, that no request was sent more
// than twice, and that the records count exactly the requests the server
// dropped; it returns the retries.
func checkRetried(t *testing.T, recs []measure.Record, dropped int) int {
	t.Helper()
	retries := 0
	for _, r := range recs {
		if !r.OK() {
			t.Errorf("request %d failed: %s %s", r.Seq, r.ErrClass, r.Error)
		}
		if r.ConnRetries > 1 {
			t.Errorf("request %d sent %d times", r.Seq, r.ConnRetries+1)
		}
		retries += r.ConnRetries
	}
	if retries != dropped {
		t.Errorf("records count %d retries; the server dropped %d requests", retries, dropped)
	}
	return retries
}

// TestServerClosesAfterEachStream is llama.cpp's llama-server: it advertises
// keep-alive, then closes the connection after every streamed answer. Every
// request sent on such a connection is sent once more on a new one, and
// none fails.
func TestServerClosesAfterEachStream(t *testing.T) {
	srv, closer := newClosingServer(t, script{chunks: 3}, keepalive.Policy{AfterStream: true})
	recs := sweepRecords(t, Options{URL: srv.URL, Concurrency: []int{1, 4}, Requests: 12, Warmup: 2})
	if len(recs) != 2+24 {
		t.Fatalf("%d records, want 26", len(recs))
	}
	if n := checkRetried(t, recs, closer.Dropped(http.MethodPost)); n == 0 {
		t.Error("no request was retried: the server closed no connection a request went out on")
	}
}

// TestServerClosesIdleConnections: connections left idle through a level
// at C=1, between two levels at C=4, are closed by the server; the requests
// that find them closed are sent again on new connections.
func TestServerClosesIdleConnections(t *testing.T) {
	const idle = 30 * time.Millisecond
	// A request lasts at least 5 × 5 ms, so level C=1's four requests leave
	// three connections idle for over 100 ms.
	srv, closer := newClosingServer(t, script{chunks: 5, gap: 5 * time.Millisecond}, keepalive.Policy{Idle: idle})
	recs := sweepRecords(t, Options{URL: srv.URL, Concurrency: []int{4, 1, 4}, Requests: 4})
	n := checkRetried(t, recs, closer.Dropped(http.MethodPost))
	if n < 3 {
		t.Errorf("%d requests retried, want at least the 3 that found their connection idle through level C=1", n)
	}
}

// rawServer answers on a raw TCP listener: handle gets each accepted
// connection and the number of connections accepted before it.
func rawServer(t *testing.T, handle func(c net.Conn, br *bufio.Reader, i int)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c, bufio.NewReader(c), i)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// streamAnswer is a complete streamed answer of one token with a length;
// with close, it tells the client not to reuse the connection.
func streamAnswer(close bool) string {
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n"
	header := ""
	if close {
		header = "Connection: close\r\n"
	}
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s", header, len(body), body)
}

// readRequest reads one request and its body; false when the client went.
func readRequest(br *bufio.Reader) bool {
	req, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, req.Body)
	return true
}

// TestNothingElseIsRetried: a request is sent again only when it went out
// on a reused connection and no byte of an answer came back. A fresh
// connection closed before an answer, and a reused one that sent a byte of
// one, are results.
func TestNothingElseIsRetried(t *testing.T) {
	tests := []struct {
		name   string
		handle func(c net.Conn, br *bufio.Reader, i int)
		class  string // of the second request
	}{
		{"fresh connection closed before an answer", func(c net.Conn, br *bufio.Reader, i int) {
			if i == 0 && readRequest(br) {
				io.WriteString(c, streamAnswer(true))
				return // the first connection closes, said so: the second request dials
			}
			readRequest(br) // and the second connection closes unanswered
		}, measure.ErrConnect},
		{"reused connection answered with a byte, then closed", func(c net.Conn, br *bufio.Reader, i int) {
			if readRequest(br) {
				io.WriteString(c, streamAnswer(false))
			}
			if readRequest(br) {
				io.WriteString(c, "H")
			}
		}, measure.ErrConnect},
		{"reused connection answered with a status, then cut", func(c net.Conn, br *bufio.Reader, i int) {
			if readRequest(br) {
				io.WriteString(c, streamAnswer(false))
			}
			if readRequest(br) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
			}
		}, measure.ErrCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := rawServer(t, tt.handle)
			q := &requester{client: NewHTTPClient(1), url: url + "/v1/chat/completions", timeout: 10 * time.Second, maxTokens: 5}
			q.fresh = ownClient(q.client, true)
			var first, second measure.Record
			q.do(context.Background(), []byte(`{}`), &first)
			if !first.OK() {
				t.Fatalf("first request: %s %s", first.ErrClass, first.Error)
			}
			q.do(context.Background(), []byte(`{}`), &second)
			if second.ErrClass != tt.class || second.ConnRetries != 0 {
				t.Errorf("second request: class %q (%s), %d retries; want class %q, none", second.ErrClass, second.Error, second.ConnRetries, tt.class)
			}
		})
	}
}

// TestRetryOnlyOnce: a request whose retry also finds its connection
// closed fails; it is not sent a third time.
func TestRetryOnlyOnce(t *testing.T) {
	url := rawServer(t, func(c net.Conn, br *bufio.Reader, i int) {
		if i == 0 && readRequest(br) {
			io.WriteString(c, streamAnswer(false))
			readRequest(br) // the second request, on the reused connection: dropped
			return
		}
		readRequest(br) // its retry, on a new connection: dropped too
	})
	q := &requester{client: NewHTTPClient(1), url: url + "/v1/chat/completions", timeout: 10 * time.Second, maxTokens: 5}
	q.fresh = ownClient(q.client, true)
	var first, second measure.Record
	q.do(context.Background(), []byte(`{}`), &first)
	firstSend := q.do(context.Background(), []byte(`{}`), &second)
	if firstSend == 0 || firstSend >= second.SendNs {
		t.Errorf("first send %d, record's send %d: want the record to hold the retry's, later", firstSend, second.SendNs)
	}
	if !first.OK() || second.OK() || second.ConnRetries != 1 || !strings.Contains(second.Error, "EOF") {
		t.Errorf("first %s %q; second %s %q with %d retries; want the second failed after one retry",
			first.ErrClass, first.Error, second.ErrClass, second.Error, second.ConnRetries)
	}
}
