package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/keepalive"
	"github.com/bakeoff-dev/bakeoff/results"
)

// closingServer is sseServer's answer behind a keep-alive policy, each
// stream a little slow so that connections left out of a smaller level sit
// idle.
func closingServer(t *testing.T, p keepalive.Policy) (*httptest.Server, *keepalive.Closer) {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"tiny"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 3 {
			time.Sleep(5 * time.Millisecond)
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab \"}}]}\n\n")
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6}}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewUnstartedServer(mux)
	c := keepalive.New(p)
	srv.Listener = c.Install(srv.Config, srv.Listener)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, c
}

// TestSweepServerClosesConnections: bakeoff sweep against a server that
// closes its kept-alive connections, after every stream (llama.cpp's
// llama-server) or when idle, fails no request; the requests that found
// their connection closed were sent again, and the level lines count them.
func TestSweepServerClosesConnections(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy keepalive.Policy
	}{
		{"after each stream", keepalive.Policy{AfterStream: true}},
		{"when idle", keepalive.Policy{Idle: 20 * time.Millisecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, closer := closingServer(t, tt.policy)
			out := filepath.Join(t.TempDir(), "requests.jsonl")
			e, stdout, stderr := testEnv()
			// Level C=1 leaves three of C=4's connections idle for over
			// 20 ms; the second C=4 finds them closed.
			code := run(context.Background(), e, []string{"sweep", "--url", srv.URL, "--concurrency", "4,1,4",
				"--requests", "8", "--warmup", "2", "--out", out})
			if code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			text := stdout.String()
			if !strings.Contains(text, "summary: 3 levels, 24 requests, 0 failed") || !strings.Contains(text, "conn retries: ") {
				t.Errorf("output lacks no failures or the retries:\n%s", text)
			}
			recs, err := results.ReadRecords(out)
			if err != nil {
				t.Fatal(err)
			}
			retries := 0
			for _, r := range recs {
				if !r.OK() {
					t.Errorf("request failed: %s %s", r.ErrClass, r.Error)
				}
				retries += r.ConnRetries
			}
			if dropped := closer.Dropped(http.MethodPost); retries == 0 || retries != dropped {
				t.Errorf("%d retries in the records, %d requests dropped by the server; want equal and some", retries, dropped)
			}
		})
	}
}
