package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/internal/llamatest"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// countingMux counts the requests each "METHOD path" gets.
type countingMux struct {
	next http.Handler
	mu   sync.Mutex
	n    map[string]int
}

func (c *countingMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.n[r.Method+" "+r.URL.Path]++
	c.mu.Unlock()
	c.next.ServeHTTP(w, r)
}

func (c *countingMux) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// TestLlamaCppSweep runs a sweep against a server speaking llama.cpp's
// format: the records keep cached_tokens and the draft counts of the final
// chunk, the level's accept length comes from them, and with
// --slot-save-path every slot is erased before each level, so no prompt of
// one level is served from the cache in the next.
func TestLlamaCppSweep(t *testing.T) {
	for _, tt := range []struct {
		name     string
		endpoint string
		save     bool
	}{
		{"completions, slots erased", EndpointCompletions, true},
		{"chat, slots erased", EndpointChat, true},
		{"completions, no slot-save-path", EndpointCompletions, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := llamatest.Config{Model: "/m.gguf", Slots: 2, SlotSavePath: tt.save, Speculative: true, TokenGap: time.Microsecond}
			mux := &countingMux{next: llamatest.New(cfg).Handler(), n: map[string]int{}}
			srv := httptest.NewServer(mux)
			defer srv.Close()
			recs, all := collect()
			// The same 6 prompts in each level: a cache left between levels
			// would serve the second level.
			res, err := Run(context.Background(), Options{URL: srv.URL, Endpoint: tt.endpoint, Concurrency: []int{1, 2},
				Requests: 6, Warmup: 0, MaxTokens: 16, Prompts: testPrompts(t), Engine: engine.Lookup(engine.LlamaCpp), Records: recs})
			if err != nil {
				t.Fatal(err)
			}
			var cachedLevel2 int
			for _, r := range all() {
				if !r.OK() {
					t.Fatalf("request failed: %s", r.Error)
				}
				if d, a, ok := r.Draft(); r.CachedTokens == nil || !ok || d != 16 || a != 8 {
					t.Fatalf("record cached %v draft %d/%d (%v), want cached reported and 8 of 16 drafts accepted",
						r.CachedTokens, a, d, ok)
				}
				if r.Level == measure.ConcurrencyLevel(2) {
					cachedLevel2 += *r.CachedTokens
				}
			}
			for _, l := range res.Levels {
				if l.AcceptLength == nil || *l.AcceptLength != 2 || l.AcceptLengthSource != engine.SourceLlamaCppTimings {
					t.Errorf("%s accept length %v from %q, want 2 from the timings", l.Level, l.AcceptLength, l.AcceptLengthSource)
				}
			}
			if tt.save {
				if cachedLevel2 != 0 {
					t.Errorf("level 2 served %d prompt tokens from the cache after the erase", cachedLevel2)
				}
				// Two slots erased before each of the two levels.
				if n := mux.count("POST /slots/0") + mux.count("POST /slots/1"); n != 4 {
					t.Errorf("%d slot erases, want 4", n)
				}
				for _, l := range res.Levels {
					if l.CacheReset != "POST /slots/{0..1}?action=erase" || l.CacheResetNote != "" {
						t.Errorf("%s reset %q note %q", l.Level, l.CacheReset, l.CacheResetNote)
					}
				}
				return
			}
			if cachedLevel2 == 0 {
				t.Error("without an erase the second level found nothing in the cache: the test server is not caching")
			}
			for _, l := range res.Levels {
				if l.CacheReset != "" || !strings.Contains(l.CacheResetNote, "--slot-save-path") {
					t.Errorf("%s reset %q note %q", l.Level, l.CacheReset, l.CacheResetNote)
				}
			}
			if n := strings.Count(strings.Join(res.Warnings, "\n"), "--slot-save-path"); n != 1 {
				t.Errorf("the missing reset is warned about %d times, want once: %q", n, res.Warnings)
			}
		})
	}
}

// TestResetFailure: a server that keeps refusing the reset is measured
// anyway, and the level says the cache was not cleared: SGLang answering 400
// (its scheduler busy, or a build that ignores ?timeout=), vLLM answering
// 200 {"success": false} (blocks still held; api_router.py).
func TestResetFailure(t *testing.T) {
	for _, tt := range []struct {
		engine, route string
		answer        func(w http.ResponseWriter, r *http.Request)
		note          string
	}{
		{engine.SGLang, "POST /flush_cache", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "requests running", http.StatusBadRequest)
		}, "clearing the prefix cache failed: POST /flush_cache?timeout=20: status 400"},
		{engine.VLLM, "POST /reset_prefix_cache", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"success":false}`))
		}, "clearing the prefix cache failed: POST /reset_prefix_cache: status 200, but the server did not reset its prefix cache"},
	} {
		t.Run(tt.engine, func(t *testing.T) {
			var calls atomic.Int64
			mux := http.NewServeMux()
			mux.HandleFunc(tt.route, func(w http.ResponseWriter, r *http.Request) { calls.Add(1); tt.answer(w, r) })
			rec := &promptRecorder{}
			srv := rec.server(t, mux)
			res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{1}, Requests: 2, Prompts: testPrompts(t),
				Engine: engine.Lookup(tt.engine)})
			if err != nil {
				t.Fatal(err)
			}
			l := res.Levels[0]
			if l.OK != 2 || l.CacheReset != "" || !strings.Contains(l.CacheResetNote, tt.note) {
				t.Errorf("level ok %d, reset %q, note %q; want the note %q", l.OK, l.CacheReset, l.CacheResetNote, tt.note)
			}
			if n := calls.Load(); n != 3 {
				t.Errorf("%d reset calls, want 3 (tried again twice)", n)
			}
		})
	}
}

// TestCampaignReset: what the campaign says of the server's prefix cache
// replaces the engine's reset: none (no call, the level says there was
// nothing to clear), an HTTP call of its own method and path, or a command
// whose exit status says whether it cleared.
func TestCampaignReset(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "cleared")
	for _, tt := range []struct {
		name      string
		o         Options
		calls     int // to PUT /cache/clear
		reset     string
		note      string
		noCache   bool
		ranMarker bool
	}{
		{"none", Options{NoPrefixCache: true}, 0, "", "", true, false},
		{"an HTTP call", Options{CacheReset: "PUT /cache/clear"}, 1, "PUT /cache/clear (prefix_cache.reset)", "", false, false},
		{"an HTTP call refused", Options{CacheReset: "POST /cache/clear"}, 0, "", "clearing the prefix cache failed: POST /cache/clear: status 405", false, false},
		{"a command", Options{CacheResetCommand: "touch " + mark}, 0, "touch " + mark + " (prefix_cache.reset_command)", "", false, true},
		{"a command that fails", Options{CacheResetCommand: "echo no cache here >&2; exit 3"}, 0, "",
			"clearing the prefix cache failed: echo no cache here >&2; exit 3: exit status 3: no cache here", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(mark)
			var calls atomic.Int64
			mux := http.NewServeMux()
			mux.HandleFunc("PUT /cache/clear", func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
			srv := (&promptRecorder{}).server(t, mux)
			o := tt.o
			o.URL, o.Concurrency, o.Requests, o.Prompts, o.Engine = srv.URL, []int{1}, 2, testPrompts(t), engine.Lookup(engine.Generic)
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			l := res.Levels[0]
			if l.CacheReset != tt.reset || !strings.Contains(l.CacheResetNote, tt.note) || (tt.note == "") != (l.CacheResetNote == "") || l.NoPrefixCache != tt.noCache {
				t.Errorf("reset %q, note %q, no cache %v; want %q, %q, %v", l.CacheReset, l.CacheResetNote, l.NoPrefixCache, tt.reset, tt.note, tt.noCache)
			}
			if n := calls.Load(); int(n) != tt.calls {
				t.Errorf("%d calls to the reset, want %d", n, tt.calls)
			}
			if _, err := os.Stat(mark); (err == nil) != tt.ranMarker {
				t.Errorf("the command's mark exists: %v, want %v", err == nil, tt.ranMarker)
			}
		})
	}
}
