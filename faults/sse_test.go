package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Sweep shape for the broken-stream cases: small, so each case is quick,
// with two levels so a bad stream at C>1 is covered too.
const (
	sseLevels   = "1,2"
	sseRequests = 3
	// sseHangTimeout ends the requests of the case that hangs on purpose.
	// The others end on their own and get sseRequestTimeout, long enough
	// for a loaded machine to read an 8 MiB line, so that they end in the
	// class they test rather than in a timeout. sseRunTimeout bounds a whole
	// sweep, which must never hang.
	sseHangTimeout    = "1s"
	sseRequestTimeout = "20s"
	sseRunTimeout     = 90 * time.Second
)

// okChunk is one well-formed streamed chat chunk.
const okChunk = `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n"

// hijack takes the raw connection so a handler can break HTTP itself.
func hijack(w http.ResponseWriter) net.Conn {
	c, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	return c
}

func streamHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

// sseCases are servers that break the stream in every way seen or feared.
// want lists the error classes a request may end with; every request must
// end in one of them.
var sseCases = []struct {
	name    string
	handler http.HandlerFunc
	want    []string
}{
	{"binary garbage", func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		w.Write([]byte("\x00\xff\xfe garbage \x1b[31m\r\r\n\x00data"))
	}, []string{measure.ErrMalformed, measure.ErrNoDone, measure.ErrEmpty, measure.ErrCut}},
	{"invalid JSON", func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		fmt.Fprint(w, "data: {not json at all\n\ndata: [DONE]\n\n")
	}, []string{measure.ErrMalformed}},
	{"JSON of the wrong shape", func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		fmt.Fprint(w, `data: {"choices": "nope", "usage": [1,2]}`+"\n\ndata: [DONE]\n\n")
	}, []string{measure.ErrMalformed, measure.ErrEmpty}},
	{"cut mid-stream", func(w http.ResponseWriter, r *http.Request) {
		c := hijack(w)
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(c, "%x\r\n%s\r\n", len(okChunk), okChunk)
		fmt.Fprint(c, "40\r\ndata: {\"choi")
		c.Close()
	}, []string{measure.ErrCut}},
	{"no DONE", func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		fmt.Fprint(w, okChunk+okChunk)
	}, []string{measure.ErrNoDone}},
	{"HTTP 500 with HTML", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "<html><body>Internal Server Error</body></html>")
	}, []string{measure.ErrHTTP}},
	{"error object in stream", func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		fmt.Fprint(w, okChunk+`data: {"error": {"message": "CUDA error: an illegal memory access", "code": 500}}`+"\n\ndata: [DONE]\n\n")
	}, []string{measure.ErrServer}},
	{"one huge line", func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		w.Write([]byte("data: " + strings.Repeat("A", 8<<20)))
	}, []string{measure.ErrMalformed, measure.ErrNoDone, measure.ErrCut}},
	{"headers then silence", func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}, []string{measure.ErrTimeout}},
	// Negative token counts must not be taken as measurements: they
	// would turn throughput negative.
	{"absurd usage", func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		fmt.Fprint(w, okChunk+`data: {"choices":[],"usage":{"prompt_tokens":-3,"completion_tokens":-7}}`+"\n\ndata: [DONE]\n\n")
	}, []string{measure.ErrMalformed, measure.ErrEmpty}},
	{"plain JSON, not a stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"content":"hi"}}],"usage":{"completion_tokens":1}}`)
	}, []string{measure.ErrMalformed, measure.ErrNoDone, measure.ErrEmpty}},
	{"reset before response", func(w http.ResponseWriter, r *http.Request) {
		c := hijack(w)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // RST, not FIN
		}
		c.Close()
	}, []string{measure.ErrConnect, measure.ErrCut}},
}

// TestBrokenStreams runs the real `bakeoff sweep` against servers that break
// the SSE stream: the sweep must end (never hang), exit 1 rather than crash,
// and record every request as a failure of the expected class.
func TestBrokenStreams(t *testing.T) {
	for _, tc := range sseCases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			mux := http.NewServeMux()
			mux.HandleFunc("/v1/chat/completions", tc.handler)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			timeout := sseRequestTimeout
			if slices.Equal(tc.want, []string{measure.ErrTimeout}) {
				timeout = sseHangTimeout
			}
			res, recs := runSweep(t, srv.URL, timeout)
			if res.code != 1 {
				t.Errorf("want exit 1 (every request failed), got %s", res)
			}
			checkSweepRecords(t, recs, tc.want, res)
		})
	}
}

// TestSweepServerGone points the sweep at a port nobody listens on.
func TestSweepServerGone(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	res, recs := runSweep(t, url, sseRequestTimeout)
	if res.code != 1 {
		t.Errorf("want exit 1, got %s", res)
	}
	checkSweepRecords(t, recs, []string{measure.ErrConnect}, res)
}

func runSweep(t *testing.T, url, requestTimeout string) (result, []measure.Record) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "requests.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), sseRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bakeoffBin, "sweep", "--url", url, "--model", "m",
		"--concurrency", sseLevels, "--requests", fmt.Sprint(sseRequests), "--warmup", "0",
		"--max-tokens", "8", "--request-timeout", requestTimeout, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("bakeoff sweep hung for %s\n%s", sseRunTimeout, res)
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	for _, p := range panicMarks {
		if strings.Contains(res.stdout+res.stderr, p) {
			t.Fatalf("bakeoff sweep printed %q:\n%s", p, res)
		}
	}
	recs, err := results.ReadRecords(out)
	if err != nil {
		t.Fatalf("reading the records: %v\n%s", err, res)
	}
	return res, recs
}

func checkSweepRecords(t *testing.T, recs []measure.Record, want []string, res result) {
	t.Helper()
	if n := 2 * sseRequests; len(recs) != n {
		t.Errorf("%d records, want %d (one per request, failures included)\n%s", len(recs), n, res)
	}
	for _, r := range recs {
		ok := false
		for _, w := range want {
			ok = ok || r.ErrClass == w
		}
		if !ok {
			t.Errorf("request %s #%d: class %q (%s), want one of %v", r.Level, r.Seq, r.ErrClass, r.Error, want)
		}
	}
}
