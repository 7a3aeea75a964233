package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// TestSGLangInfoPaths: the sweep asks SGLang's /server_info, the call's name
// since late 2025, and /get_server_info only where /server_info answers 404
// (older builds). A build that has both is never asked the deprecated path,
// which logs a warning on every call (http_server.py).
func TestSGLangInfoPaths(t *testing.T) {
	const info = `{"version":"%s","internal_states":[{"avg_spec_accept_length":2.1}]}`
	for _, tt := range []struct {
		name        string
		paths       []string // the info paths the server has
		wantAsked   []string // info paths asked, in order, over the sweep
		wantVersion string
	}{
		{"current build", []string{"/server_info", "/get_server_info"}, []string{"/server_info", "/server_info", "/server_info"}, "0.5.20"},
		{"newest build, alias removed", []string{"/server_info"}, []string{"/server_info", "/server_info", "/server_info"}, "0.5.20"},
		{"older build", []string{"/get_server_info"}, []string{"/server_info", "/get_server_info", "/get_server_info", "/get_server_info"}, "0.4.6"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			mux := http.NewServeMux()
			mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
			})
			mux.HandleFunc("/v1/chat/completions", script{chunks: 2}.serve)
			mux.HandleFunc("/flush_cache", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "Cache flushed.\n") })
			version := tt.wantVersion
			for _, p := range []string{"/server_info", "/get_server_info"} {
				has := false
				for _, q := range tt.paths {
					has = has || q == p
				}
				mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					asked = append(asked, p)
					mu.Unlock()
					if !has {
						http.NotFound(w, r)
						return
					}
					fmt.Fprintf(w, info, version)
				})
			}
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)

			dir := t.TempDir()
			_, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{2}, Requests: 4,
				Prompts: testPrompts(t), MetricsDir: dir, Engine: engine.Lookup(engine.SGLang)})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(asked) != fmt.Sprint(tt.wantAsked) {
				t.Errorf("info paths asked %v, want %v", asked, tt.wantAsked)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "C002-r0-*-server_info.json"))
			if len(files) != 3 {
				t.Fatalf("info answers saved: %v, want before, mid and after", files)
			}
			for _, f := range files {
				b, _ := os.ReadFile(f)
				if got := engine.Lookup(engine.SGLang).Info.Parse(b).Version; got != tt.wantVersion {
					t.Errorf("%s: version %q, want %q", f, got, tt.wantVersion)
				}
			}
		})
	}
}
