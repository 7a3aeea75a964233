package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// chatChunk is a chunk as SGLang streams it, one short token of content.
const chatChunk = `{"id":"5f0c9e3a2b7d4c1e8f6a9b0c","object":"chat.completion.chunk","created":1767225600,"model":"kimi-k2.5","choices":[{"index":0,"delta":{"role":null,"content":" token","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`

// BenchmarkStreamParse measures the client's per-chunk path: SSE framing,
// JSON decoding and the stream state, over an in-memory stream.
func BenchmarkStreamParse(b *testing.B) {
	const chunks = 1000
	var stream bytes.Buffer
	for range chunks {
		fmt.Fprintf(&stream, "data: %s\n\n", chatChunk)
	}
	stream.WriteString("data: [DONE]\n\n")
	data := stream.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := newSSEReader(bytes.NewReader(data))
		st := streamState{hash: sha256New()}
		var rec measure.Record
		var c chunk
		for {
			d, err := s.next()
			if err != nil || bytes.Equal(d, doneMarker) {
				break
			}
			if err := parseChunk(d, &c); err != nil {
				b.Fatal(err)
			}
			st.add(&c, int64(i), &rec)
		}
		st.finish(&rec, chunks)
		if rec.Chunks != chunks {
			b.Fatalf("%d chunks", rec.Chunks)
		}
	}
	b.ReportMetric(float64(b.N*chunks)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkParseChunk is the JSON decoding of one chunk alone.
func BenchmarkParseChunk(b *testing.B) {
	data := []byte(chatChunk)
	b.ReportAllocs()
	var c chunk
	for i := 0; i < b.N; i++ {
		if err := parseChunk(data, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// loopServer is a trivial OpenAI-compatible server for loopback benchmarks:
// every answer is chunks pre-encoded chunks, each flushed on its own, paced
// by gap (0: as fast as the socket takes them). It notes, per prompt, when
// it flushed the first chunk and [DONE], on the client's clock.
type loopServer struct {
	chunks int
	gap    time.Duration
	// stagger spreads the streams' chunk times over the gap instead of
	// aligning them, so the figure is the client's per-chunk delay rather
	// than the queue of a burst of 64 chunks on a machine the server shares.
	stagger bool
	// steps puts every stream's chunks on one clock of period gap, as one
	// decode step of an engine emits a token for every running stream.
	steps bool
	n     atomic.Int64
	mu    sync.Mutex
	first map[string]int64
	done  map[string]int64
}

func (s *loopServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		io.WriteString(w, `{"data":[{"id":"loop"}]}`)
		return
	case "/v1/chat/completions":
	default:
		http.NotFound(w, r) // no metrics: a bare server
		return
	}
	var body struct {
		Messages []prompts.Message `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	key := ""
	if len(body.Messages) > 0 {
		key = body.Messages[0].Content
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	ev := []byte("data: " + chatChunk + "\n\n")
	start := time.Now()
	if s.stagger && s.gap > 0 {
		start = start.Add(time.Duration(s.n.Add(1)%64) * s.gap / 64)
	}
	var first int64
	for i := range s.chunks {
		switch {
		case s.steps:
			time.Sleep(time.Until(time.Now().Truncate(s.gap).Add(s.gap)))
		case s.gap > 0:
			time.Sleep(time.Until(start.Add(time.Duration(i) * s.gap)))
		}
		w.Write(ev)
		fl.Flush()
		if i == 0 {
			first = nowNs()
		}
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.chunks)
	fl.Flush()
	done := nowNs()
	if s.first != nil {
		s.mu.Lock()
		s.first[key], s.done[key] = first, done
		s.mu.Unlock()
	}
}

// times returns copies of the flush times recorded so far, by prompt.
func (s *loopServer) times() (first, done map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.first), maps.Clone(s.done)
}

// uniquePrompts is a set of n distinct one-line prompts, so a server can
// tell requests apart by their text.
func uniquePrompts(b testing.TB, n int) *prompts.Set {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "{\"prompt\": \"p%d\"}\n", i)
	}
	set, err := prompts.Parse("bench", []byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	return set
}

// BenchmarkLoopback250 streams from a trivial local server at 250 concurrent
// requests, as fast as it sends, and reports the chunks the client took in
// per second (server and client share the machine).
func BenchmarkLoopback250(b *testing.B) {
	const (
		c      = 250
		n      = 2 * c
		chunks = 200
	)
	srv := httptest.NewServer(&loopServer{chunks: chunks})
	defer srv.Close()
	set := uniquePrompts(b, n)
	var total, failed int
	var achieved float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), Options{URL: srv.URL, Concurrency: []int{c}, Requests: n,
			Prompts: set, Records: func(r measure.Record) error {
				total += r.Chunks
				if !r.OK() {
					failed++
				}
				return nil
			}})
		if err != nil {
			b.Fatal(err)
		}
		achieved += res.Levels[0].AchievedConcurrency
	}
	if failed > 0 {
		b.Fatalf("%d requests failed", failed)
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "chunks/s")
	b.ReportMetric(achieved/float64(b.N), "achieved-C")
}

// BenchmarkTimingOverheadC64 measures how late the client timestamps what
// the server sent, at 64 paced streams (20 chunks, 10 ms apart): first token
// (client FirstNs − the server's flush of the first chunk) and end (EndNs −
// the flush of [DONE]), both on the same clock, in microseconds. "aligned"
// has every stream emit in the same instant, as one decode step of a real
// engine does; "staggered" spreads them over the gap.
//
// The own-process variants run the server in a process of its own, as an
// engine is: then the client's Go scheduler serves the client alone, and
// only the machine's cores are shared.
func BenchmarkTimingOverheadC64(b *testing.B) {
	b.Run("aligned", func(b *testing.B) { benchOverhead(b, false, false) })
	b.Run("staggered", func(b *testing.B) { benchOverhead(b, true, false) })
	b.Run("own-process-aligned", func(b *testing.B) { benchOverhead(b, false, true) })
	b.Run("own-process-staggered", func(b *testing.B) { benchOverhead(b, true, true) })
}

// Pacing of the overhead benchmark's streams.
const (
	overheadChunks = 20
	overheadGap    = 10 * time.Millisecond
)

func benchOverhead(b *testing.B, stagger, ownProcess bool) {
	const (
		c = 64
		n = 8 * c
	)
	var url string
	var times func() (first, done map[string]int64)
	if ownProcess {
		mode := "aligned"
		if stagger {
			mode = "staggered"
		}
		url, times = startLoopServerProcess(b, mode)
	} else {
		ls := &loopServer{chunks: overheadChunks, gap: overheadGap, stagger: stagger, first: map[string]int64{}, done: map[string]int64{}}
		srv := httptest.NewServer(ls)
		defer srv.Close()
		url, times = srv.URL, ls.times
	}
	set := uniquePrompts(b, n)
	var firstLag, endLag []float64
	var mu sync.Mutex
	var recs []measure.Record
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		recs = recs[:0]
		_, err := Run(context.Background(), Options{URL: url, Concurrency: []int{c}, Requests: n,
			Prompts: set, Records: func(r measure.Record) error {
				mu.Lock()
				recs = append(recs, r)
				mu.Unlock()
				return nil
			}})
		if err != nil {
			b.Fatal(err)
		}
		first, done := times()
		for _, r := range recs {
			key := set.Prompts[r.Prompt].Text
			f, d := first[key], done[key]
			if !r.OK() || f == 0 {
				b.Fatalf("record %+v unmatched", r)
			}
			firstLag = append(firstLag, float64(r.FirstNs-f)/1e3)
			endLag = append(endLag, float64(r.EndNs-d)/1e3)
		}
	}
	b.ReportMetric(measure.Percentile(firstLag, 50), "first-p50-µs")
	b.ReportMetric(measure.Percentile(firstLag, 99), "first-p99-µs")
	b.ReportMetric(measure.Percentile(endLag, 50), "end-p50-µs")
	b.ReportMetric(measure.Percentile(endLag, 99), "end-p99-µs")
}

// BenchmarkSchedulerNoise is the machine's floor for the figures above: 64
// goroutines wake every 10 ms, as the paced streams do, and the lateness of
// each wake-up (actual − scheduled, µs) is what any timestamp taken on this
// machine at that moment suffers, HTTP or not.
func BenchmarkSchedulerNoise(b *testing.B) {
	const (
		c     = 64
		ticks = 20 * 8
		gap   = 10 * time.Millisecond
	)
	var mu sync.Mutex
	var late []float64
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		for g := range c {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now().Add(time.Duration(g) * gap / c)
				mine := make([]float64, 0, ticks)
				for k := range ticks {
					at := start.Add(time.Duration(k) * gap)
					time.Sleep(time.Until(at))
					mine = append(mine, float64(time.Since(at))/1e3)
				}
				mu.Lock()
				late = append(late, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(measure.Percentile(late, 50), "late-p50-µs")
	b.ReportMetric(measure.Percentile(late, 99), "late-p99-µs")
}
