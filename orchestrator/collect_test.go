package orchestrator

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestCollectInfoPaths: collect asks SGLang's /server_info and falls back to
// /get_server_info only on a 404, as older builds have only that; the
// version comes from whichever answered, and a server with neither is a
// warning naming the last path asked.
func TestCollectInfoPaths(t *testing.T) {
	const info = `{"version":"%s","internal_states":[{"avg_spec_accept_length":2.5}]}`
	for _, tt := range []struct {
		name    string
		has     map[string]string // path → version it answers with
		asked   []string
		version string
		warning string
	}{
		{"current build", map[string]string{"/server_info": "0.5.20", "/get_server_info": "0.5.20"}, []string{"/server_info"}, "0.5.20", ""},
		{"older build", map[string]string{"/get_server_info": "0.4.6"}, []string{"/server_info", "/get_server_info"}, "0.4.6", ""},
		{"neither", nil, []string{"/server_info", "/get_server_info"}, "", "collecting /get_server_info from local: status 404"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/metrics" {
					return
				}
				mu.Lock()
				asked = append(asked, r.URL.Path)
				mu.Unlock()
				v, ok := tt.has[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				fmt.Fprintf(w, info, v)
			}))
			t.Cleanup(srv.Close)

			var warnings []string
			o := &orch{now: time.Now, emit: func(e Event) {
				if e.Kind == EventWarning {
					warnings = append(warnings, e.Message)
					// A launch's warning names its host, as its other
					// events do: a fleet's display groups by it.
					if e.Host != "gpu-a" || e.Scenario != "s" {
						t.Errorf("warning %q names host %q and scenario %q, want gpu-a and s", e.Message, e.Host, e.Scenario)
					}
				}
			}}
			s := &scenarioRun{o: o, w: &worker{o: o, h: remote.NewLocal(), tag: "gpu-a"}, sc: &campaign.Scenario{Name: "s"},
				profile: engine.Lookup(engine.SGLang), dir: t.TempDir(), client: srv.Client(), baseURL: srv.URL}
			if err := collect(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(asked) != fmt.Sprint(tt.asked) {
				t.Errorf("asked %v, want %v", asked, tt.asked)
			}
			if s.result.EngineVersion != tt.version {
				t.Errorf("engine version %q, want %q", s.result.EngineVersion, tt.version)
			}
			if got := strings.Join(warnings, "; "); !strings.Contains(got, tt.warning) || (tt.warning == "") != (got == "") {
				t.Errorf("warnings %q, want %q", got, tt.warning)
			}
			_, err := os.Stat(filepath.Join(s.dir, results.MetricsDir, "server_info.json"))
			if (err == nil) != (tt.version != "") {
				t.Errorf("server_info.json saved: %v, want %v", err == nil, tt.version != "")
			}
		})
	}
}
