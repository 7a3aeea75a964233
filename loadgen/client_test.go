package loadgen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// doOnce sends one request to url with a fresh client and returns its record.
func doOnce(t *testing.T, url string, timeout time.Duration) measure.Record {
	t.Helper()
	q := &requester{client: NewHTTPClient(4), url: url, timeout: timeout, maxTokens: 50}
	var rec measure.Record
	q.do(context.Background(), []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), &rec)
	return rec
}

func TestRequestOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		sc         script
		path       string
		class      string
		tokens     int
		chunks     int
		estimated  bool
		status     int
		errContain string
	}{
		{name: "one token per chunk", sc: script{chunks: 5}, tokens: 5, chunks: 5, status: 200},
		{name: "multi-token chunks", sc: script{chunks: 4, tokensPerChunk: 3}, tokens: 12, chunks: 4, status: 200},
		{name: "role-only first chunk", sc: script{chunks: 3, roleFirst: true}, tokens: 3, chunks: 3, status: 200},
		{name: "comments and keep-alives, CRLF", sc: script{chunks: 3, keepAlive: true, crlf: true}, tokens: 3, chunks: 3, status: 200},
		{name: "completions endpoint", sc: script{chunks: 3, completions: true}, path: "/v1/completions", tokens: 3, chunks: 3, status: 200},
		{name: "no usage, stopped by length", sc: script{chunks: 4, tokensPerChunk: 2, noUsage: true}, tokens: 50, chunks: 4, estimated: true, status: 200},
		{name: "no usage, stopped by eos", sc: script{chunks: 4, tokensPerChunk: 2, noUsage: true, finish: "stop"}, tokens: 4, chunks: 4, estimated: true, status: 200},
		{name: "missing DONE", sc: script{chunks: 3, noDone: true}, class: measure.ErrNoDone, tokens: 3, chunks: 3, status: 200, errContain: "[DONE]"},
		{name: "disconnect mid-stream", sc: script{chunks: 10, cutAfter: 4}, class: measure.ErrCut, chunks: 4, status: 200, errContain: "cut"},
		{name: "HTTP 500", sc: script{status: 500}, class: measure.ErrHTTP, status: 500, errContain: "overloaded"},
		{name: "HTTP 429", sc: script{status: 429}, class: measure.ErrHTTP, status: 429, errContain: "HTTP 429"},
		{name: "empty answer", sc: script{chunks: 0, noUsage: true}, class: measure.ErrEmpty, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.sc)
			path := tt.path
			if path == "" {
				path = "/v1/chat/completions"
			}
			rec := doOnce(t, srv.URL+path, 10*time.Second)
			if rec.ErrClass != tt.class {
				t.Fatalf("class %q (%s), want %q", rec.ErrClass, rec.Error, tt.class)
			}
			if tt.errContain != "" && !strings.Contains(rec.Error, tt.errContain) {
				t.Errorf("error %q does not mention %q", rec.Error, tt.errContain)
			}
			if rec.Status != tt.status {
				t.Errorf("status %d, want %d", rec.Status, tt.status)
			}
			if tt.class == "" || tt.class == measure.ErrNoDone {
				if rec.Tokens != tt.tokens {
					t.Errorf("tokens %d, want %d", rec.Tokens, tt.tokens)
				}
			}
			if rec.Chunks != tt.chunks {
				t.Errorf("chunks %d, want %d", rec.Chunks, tt.chunks)
			}
			if rec.OK() && rec.TokensEstimated != tt.estimated {
				t.Errorf("estimated %v, want %v", rec.TokensEstimated, tt.estimated)
			}
			if rec.SendNs == 0 || rec.EndNs < rec.SendNs {
				t.Errorf("times send %d end %d", rec.SendNs, rec.EndNs)
			}
			if rec.Chunks > 0 && (rec.FirstNs < rec.SendNs || rec.FirstNs > rec.EndNs) {
				t.Errorf("first token at %d outside [%d, %d]", rec.FirstNs, rec.SendNs, rec.EndNs)
			}
		})
	}
}

func TestRoleOnlyChunkIsNotFirstToken(t *testing.T) {
	const ttft = 150 * time.Millisecond
	srv := newServer(t, script{chunks: 2, roleFirst: true, ttft: ttft})
	rec := doOnce(t, srv.URL+"/v1/chat/completions", 10*time.Second)
	if !rec.OK() {
		t.Fatal(rec.Error)
	}
	// The role chunk arrives at once; TTFT must wait for the content.
	if rec.TTFT() < ttft {
		t.Errorf("TTFT %v, want at least %v: the role-only chunk was taken as the first token", rec.TTFT(), ttft)
	}
}

func TestUsageAndHash(t *testing.T) {
	srv := newServer(t, script{chunks: 3, tokensPerChunk: 2, finish: "stop"})
	rec := doOnce(t, srv.URL+"/v1/chat/completions", 10*time.Second)
	if rec.PromptTokens != 12 || rec.Tokens != 6 || rec.FinishReason != "stop" {
		t.Errorf("prompt %d tokens %d finish %q, want 12, 6, stop", rec.PromptTokens, rec.Tokens, rec.FinishReason)
	}
	sum := sha256.Sum256([]byte(strings.Repeat("tok ", 6)))
	if want := "sha256:" + hex.EncodeToString(sum[:]); rec.OutputHash != want {
		t.Errorf("hash %s, want %s", rec.OutputHash, want)
	}
}

// TestDraftCountsKept: the draft counts of llama.cpp's final chunk reach
// the record as sent, a 0 included (a random draft gets none accepted), and
// are absent when the server sent none; the level's accept length follows.
func TestDraftCountsKept(t *testing.T) {
	for _, tt := range []struct {
		name, timings string
		want          map[string]any // the record's draft fields as written
		accept        float64        // 0: none
	}{
		{"none accepted", `{"predicted_n":16,"draft_n":12,"draft_n_accepted":0}`,
			map[string]any{"draft_n": 12.0, "draft_n_accepted": 0.0}, 1},
		{"half accepted", `{"predicted_n":16,"draft_n":16,"draft_n_accepted":8}`,
			map[string]any{"draft_n": 16.0, "draft_n_accepted": 8.0}, 2},
		{"no speculation", `{"predicted_n":16}`, map[string]any{}, 0},
		{"no timings", ``, map[string]any{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, script{chunks: 4, tokensPerChunk: 4, timings: tt.timings})
			rec := doOnce(t, srv.URL+"/v1/chat/completions", 10*time.Second)
			if !rec.OK() || rec.Tokens != 16 {
				t.Fatalf("request: %s, %d tokens", rec.Error, rec.Tokens)
			}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			var line map[string]any
			if err := json.Unmarshal(b, &line); err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for _, k := range []string{"draft_n", "draft_n_accepted"} {
				if v, ok := line[k]; ok {
					got[k] = v
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("draft fields %v, want %v (record %s)", got, tt.want, b)
			}
			al, ok := measure.RecordsAcceptLength([]measure.Record{rec})
			if ok != (tt.accept != 0) || al != tt.accept {
				t.Errorf("accept length %v (%v), want %v", al, ok, tt.accept)
			}
		})
	}
}

func TestMultiTokenChunkITL(t *testing.T) {
	// 4 tokens per chunk every 40 ms: the per-token gap is about 10 ms, not 40.
	srv := newServer(t, script{chunks: 5, tokensPerChunk: 4, gap: 40 * time.Millisecond})
	rec := doOnce(t, srv.URL+"/v1/chat/completions", 10*time.Second)
	if !rec.OK() {
		t.Fatal(rec.Error)
	}
	// The median gap, not the largest: a client a loaded machine wakes
	// late reads one chunk late, and its gap is then the machine's (36 ms
	// read once), while a client that did not spread a chunk's gap over
	// its tokens would read 40 ms at every chunk.
	sorted := slices.Sorted(slices.Values(rec.ITL))
	if itl := time.Duration(sorted[len(sorted)/2]) * time.Microsecond; itl < 5*time.Millisecond || itl > 25*time.Millisecond {
		t.Errorf("median ITL %v of %v µs, want about 10ms (a 40ms gap over 4 tokens)", itl, rec.ITL)
	}
	tpot := rec.TPOT()
	if tpot < 5*time.Millisecond || tpot > 30*time.Millisecond {
		t.Errorf("TPOT %v, want about 160ms/19 = 8.4ms", tpot)
	}
}

// TestRecordKeepsEveryGap: the record keeps one gap per content chunk after
// the first, made as max_itl_ns is, so the largest is max_itl_ns to the
// microsecond, and the gaps survive the record's JSON line.
func TestRecordKeepsEveryGap(t *testing.T) {
	srv := newServer(t, script{chunks: 6, tokensPerChunk: 4, gap: 20 * time.Millisecond})
	rec := doOnce(t, srv.URL+"/v1/chat/completions", 10*time.Second)
	if !rec.OK() {
		t.Fatal(rec.Error)
	}
	if len(rec.ITL) != rec.Chunks-1 {
		t.Fatalf("%d gaps for %d chunks", len(rec.ITL), rec.Chunks)
	}
	if got, want := slices.Max(rec.ITL), (rec.MaxITLNs+500)/1000; got != want {
		t.Errorf("largest gap %dµs, max_itl_ns %d", got, rec.MaxITLNs)
	}
	// A client that a loaded machine wakes late reads two chunks at once,
	// and one gap is microseconds while the one before it is twice as long:
	// the median and the sum are what the server's pacing sets.
	sorted := slices.Sorted(slices.Values(rec.ITL))
	if med := sorted[len(sorted)/2]; med < 2_000 || med > 30_000 {
		t.Errorf("median gap %dµs of %v, want about 5ms (20ms over 4 tokens)", med, rec.ITL)
	}
	var sum int64
	for _, g := range rec.ITL {
		sum += int64(g)
	}
	if want := int64(len(rec.ITL)) * 5_000; sum < want/2 || sum > 3*want {
		t.Errorf("gaps sum to %dµs, want about %dµs: %v", sum, want, rec.ITL)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back measure.Record
	if err := json.Unmarshal(line, &back); err != nil || !slices.Equal(back.ITL, rec.ITL) {
		t.Errorf("gaps %v read back as %v (%v)", rec.ITL, back.ITL, err)
	}
}

// TestGapsPerChunk: with usage on every chunk each gap is over its own
// tokens, and a chunk without a count is left out, as from max_itl_ns.
func TestGapsPerChunk(t *testing.T) {
	cs := []chunkGap{{ns: 40e6, tokens: 4}, {ns: 9e6}, {ns: 30e6, tokens: 1}}
	if got := gaps(cs, true, 9, 4); !slices.Equal(got, measure.Gaps{10_000, 30_000}) {
		t.Errorf("per chunk: %v", got)
	}
	if got := gaps(cs, false, 8, 4); !slices.Equal(got, measure.Gaps{20_000, 4_500, 15_000}) {
		t.Errorf("by the mean: %v", got)
	}
	if got := gaps(nil, false, 1, 1); got != nil {
		t.Errorf("one chunk: %v", got)
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	srv := newServer(t, script{chunks: 2, ttft: 20 * time.Second})
	start := time.Now()
	rec := doOnce(t, srv.URL+"/v1/chat/completions", 300*time.Millisecond)
	if rec.ErrClass != measure.ErrTimeout {
		t.Fatalf("class %q (%s), want timeout", rec.ErrClass, rec.Error)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("timeout took %v", el)
	}
}

func TestTimeoutMidStream(t *testing.T) {
	srv := newServer(t, script{chunks: 100, gap: 100 * time.Millisecond})
	rec := doOnce(t, srv.URL+"/v1/chat/completions", 350*time.Millisecond)
	if rec.ErrClass != measure.ErrTimeout || rec.Chunks == 0 {
		t.Fatalf("class %q chunks %d (%s), want timeout after some chunks", rec.ErrClass, rec.Chunks, rec.Error)
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rec := doOnce(t, "http://"+addr+"/v1/chat/completions", 5*time.Second)
	if rec.ErrClass != measure.ErrConnect || rec.Status != 0 {
		t.Errorf("class %q status %d (%s), want connect, 0", rec.ErrClass, rec.Status, rec.Error)
	}
}

func TestMalformedStreams(t *testing.T) {
	tests := []struct {
		name, body, ctype, class, contains string
	}{
		{"bad JSON", "data: {\"choices\": [\n\n", "text/event-stream", measure.ErrMalformed, "bad chunk JSON"},
		{"error object", "data: {\"error\":{\"message\":\"KV cache exhausted\"}}\n\n", "text/event-stream", measure.ErrServer, "KV cache exhausted"},
		{"not a stream", `{"choices":[{"message":{"content":"hi"}}]}`, "application/json", measure.ErrMalformed, "not a stream"},
		{"cut inside a line", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"cho", "text/event-stream", measure.ErrCut, "middle of a line"},
		{"oversized event", "data: " + strings.Repeat("x", MaxEventBytes+10) + "\n\n", "text/event-stream", measure.ErrMalformed, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			rec := doOnce(t, srv.URL, 10*time.Second)
			if rec.ErrClass != tt.class || !strings.Contains(rec.Error, tt.contains) {
				t.Errorf("got %q %q, want %q containing %q", rec.ErrClass, rec.Error, tt.class, tt.contains)
			}
			if len(rec.Error) > maxErrorLen+10 {
				t.Errorf("error message is %d bytes long", len(rec.Error))
			}
		})
	}
}

// TestArrivalTimes: the record marks when each eighth of the content
// arrived, in order and inside the stream.
func TestArrivalTimes(t *testing.T) {
	srv := newServer(t, script{chunks: 16, tokensPerChunk: 2, gap: 2 * time.Millisecond})
	rec := doOnce(t, srv.URL+"/v1/chat/completions", 10*time.Second)
	if !rec.OK() {
		t.Fatal(rec.Error)
	}
	if len(rec.ArrivalNs) != measure.ArrivalFractions-1 {
		t.Fatalf("arrival marks %v, want %d", rec.ArrivalNs, measure.ArrivalFractions-1)
	}
	prev := int64(0)
	for i, a := range rec.ArrivalNs {
		if a < prev || a > rec.EndNs-rec.FirstNs {
			t.Errorf("mark %d at %d ns: out of order or after the stream's end (%d ns)", i+1, a, rec.EndNs-rec.FirstNs)
		}
		prev = a
	}
}
