package loadgen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// Client defaults.
const (
	// DefaultRequestTimeout bounds one request from send to the end of its
	// stream when Options.RequestTimeout is zero.
	DefaultRequestTimeout = 10 * time.Minute
	// drainGrace is how long the client waits, after [DONE], for the server
	// to end the response so the connection can be reused. The request's
	// times are already taken; a server that holds the stream open only
	// costs a new connection.
	drainGrace = 200 * time.Millisecond
	// drainBytes bounds what is read after [DONE].
	drainBytes = 64 << 10
	// errorBodyBytes bounds how much of a failed response's body goes into
	// the record's error message.
	errorBodyBytes = 300
)

// requester sends one streaming request and turns what happened into a
// Record.
type requester struct {
	client *http.Client
	// fresh sends the one retry of a request that found its kept-alive
	// connection closed: it never reuses a connection.
	fresh     *http.Client
	url       string // the completions endpoint
	apiKey    string
	timeout   time.Duration
	maxTokens int
}

// do sends body and streams the answer into rec, which arrives with its
// identifying fields set. sweep is the sweep's context: its cancellation
// marks the record ErrCanceled rather than ErrTimeout. It returns when the
// request was first sent, in Unix ns: rec.SendNs unless it was sent again.
func (q *requester) do(sweep context.Context, body []byte, rec *measure.Record) (firstSendNs int64) {
	return q.doTurn(sweep, body, rec, nil)
}

// turnIO is what a session's turn adds to a request: the session's header,
// and where the answer's text goes, to be sent back in the next turn.
type turnIO struct {
	session string
	answer  *strings.Builder
}

// doTurn is do for a turn of a session (t nil: a request of none).
func (q *requester) doTurn(sweep context.Context, body []byte, rec *measure.Record, t *turnIO) (firstSendNs int64) {
	ctx, cancel := context.WithTimeout(sweep, q.timeout)
	defer cancel()
	fail := func(class string, err error) {
		if rec.EndNs == 0 {
			rec.EndNs = nowNs()
		}
		switch {
		case sweep.Err() != nil:
			class = measure.ErrCanceled
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			class = measure.ErrTimeout
			err = fmt.Errorf("no complete answer within %s: %w", q.timeout, err)
		}
		rec.ErrClass = class
		rec.Error = shortError(err)
	}

	rec.SendNs = nowNs()
	firstSendNs = rec.SendNs
	resp, stale, err := q.send(ctx, q.client, body, t)
	if err != nil && stale && ctx.Err() == nil && q.fresh != nil {
		// The server had closed the kept-alive connection this request went
		// out on (after its previous answer, or when it sat idle), and no
		// byte of an answer came: the request is sent once more, on a new
		// connection, and the record counts it. An answer of any kind,
		// even one byte of it, is a result and never sent again.
		rec.ConnRetries++
		rec.SendNs = nowNs()
		resp, _, err = q.send(ctx, q.fresh, body, t)
	}
	if err != nil {
		fail(measure.ErrConnect, err)
		return
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		fail(measure.ErrHTTP, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg))))
		return
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		fail(measure.ErrMalformed, fmt.Errorf("server answered with JSON, not a stream: %s", strings.TrimSpace(string(msg))))
		return
	}

	st := streamState{hash: sha256New()}
	if t != nil {
		st.answer = t.answer
	}
	sse := newSSEReader(resp.Body)
	var c chunk
	for {
		data, err := sse.next()
		now := nowNs()
		if err != nil {
			rec.EndNs = now
			st.finish(rec, q.maxTokens)
			switch {
			case err == io.EOF:
				fail(measure.ErrNoDone, errors.New("stream closed without data: [DONE]"))
			case errors.Is(err, errEventTooBig):
				fail(measure.ErrMalformed, err)
			default:
				fail(measure.ErrCut, fmt.Errorf("stream cut: %w", err))
			}
			return
		}
		if bytes.Equal(bytes.TrimSpace(data), doneMarker) {
			rec.EndNs = now
			break
		}
		if err := parseChunk(data, &c); err != nil {
			rec.EndNs = now
			st.finish(rec, q.maxTokens)
			fail(measure.ErrMalformed, err)
			return
		}
		if u := c.Usage; u != nil && (u.PromptTokens < 0 || u.CompletionTokens < 0) {
			// A negative count is no measurement: taken as one, it would
			// turn the level's throughput negative.
			rec.EndNs = now
			st.finish(rec, q.maxTokens)
			fail(measure.ErrMalformed, fmt.Errorf("usage with negative token counts (prompt %d, completion %d)", u.PromptTokens, u.CompletionTokens))
			return
		}
		if c.Error != nil {
			rec.EndNs = now
			st.finish(rec, q.maxTokens)
			fail(measure.ErrServer, fmt.Errorf("server error in stream: %s", c.Error.Message))
			return
		}
		st.add(&c, now, rec)
	}
	st.finish(rec, q.maxTokens)
	if rec.Tokens == 0 && rec.Chunks == 0 {
		fail(measure.ErrEmpty, errors.New("stream ended without generated text"))
	}

	// Let the transport reuse the connection: read the end of the response,
	// bounded in time and size.
	drain := time.AfterFunc(drainGrace, cancel)
	io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
	drain.Stop()
	return firstSendNs
}

// send posts body with client. stale reports that the request went out on a
// reused connection and failed before any byte of the response arrived: the
// server had closed the connection. The request carries no GetBody, so the
// transport never sends it again by itself; the one retry is do's, counted.
func (q *requester) send(ctx context.Context, client *http.Client, body []byte, t *turnIO) (resp *http.Response, stale bool, err error) {
	var reused, answered bool
	trace := &httptrace.ClientTrace{
		GotConn:              func(i httptrace.GotConnInfo) { reused = i.Reused },
		GotFirstResponseByte: func() { answered = true },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, q.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if q.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+q.apiKey)
	}
	if t != nil && t.session != "" {
		for _, h := range SessionHeaders {
			req.Header.Set(h, t.session)
		}
	}
	resp, err = client.Do(req)
	return resp, err != nil && reused && !answered, err
}

// ownClient returns a client like c with a pool of connections of its own,
// or with none when fresh is set: then every request opens a new
// connection, closed after it. It returns c itself when c's transport is
// not an *http.Transport, which it cannot copy.
func ownClient(c *http.Client, fresh bool) *http.Client {
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return c
	}
	t = t.Clone()
	t.DisableKeepAlives = fresh
	return &http.Client{Transport: t, CheckRedirect: c.CheckRedirect, Jar: c.Jar, Timeout: c.Timeout}
}

// streamState accumulates one stream's chunks.
type streamState struct {
	hash      hash.Hash // of the generated text
	lastNs    int64     // time of the previous content chunk
	maxGap    int64     // largest gap between content chunks, ns
	maxITL    int64     // largest gap per token where per-chunk counts are known
	usage     bool
	cumTokens int // completion tokens reported so far by per-chunk usage
	perChunk  bool
	// answer, when set, receives the answer's text as streamed (content,
	// not reasoning), for a session to send back.
	answer *strings.Builder
	gaps   []chunkGap // every gap between content chunks, for Record.ITL
	// arrival follows the content's arrival over the stream, in bytes of
	// text: tokens are not known per chunk, and a chunk that carries several
	// (speculative decoding) carries more text.
	arrival measure.ArrivalRecorder
}

// add takes one parsed chunk that arrived at now.
func (s *streamState) add(c *chunk, now int64, rec *measure.Record) {
	content := 0
	for i := range c.Choices {
		ch := &c.Choices[i]
		for i, t := range [...]string{ch.thinking(), ch.Delta.Content, ch.Text} {
			if t != "" {
				s.hash.Write([]byte(t))
				content += len(t)
				if i > 0 && s.answer != nil {
					s.answer.WriteString(t)
				}
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			rec.FinishReason = *ch.FinishReason
		}
	}
	if c.Usage != nil {
		s.usage = true
		rec.PromptTokens = c.Usage.PromptTokens
		rec.Tokens = c.Usage.CompletionTokens
		if d := c.Usage.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			n := *d.CachedTokens
			rec.CachedTokens = &n
		}
	}
	takeAccept(c, rec)
	if content == 0 {
		return // role-only, usage-only or finish-only: not a token
	}
	s.arrival.Add(content, now)
	rec.Chunks++
	if rec.FirstNs == 0 {
		rec.FirstNs = now
	} else {
		gap := now - s.lastNs
		s.maxGap = max(s.maxGap, gap)
		cg := chunkGap{ns: gap}
		// Servers that report usage on every chunk tell how many tokens this
		// chunk carried; spread the gap over them.
		if c.Usage != nil && c.Usage.CompletionTokens > s.cumTokens {
			s.perChunk = true
			cg.tokens = c.Usage.CompletionTokens - s.cumTokens
			s.maxITL = max(s.maxITL, gap/int64(cg.tokens))
		}
		s.gaps = append(s.gaps, cg)
	}
	if c.Usage != nil {
		s.cumTokens = c.Usage.CompletionTokens
	}
	s.lastNs = now
}

// finish fills the record's token count, ITL and output hash.
func (s *streamState) finish(rec *measure.Record, maxTokens int) {
	if rec.MaxTokens > 0 {
		maxTokens = rec.MaxTokens // the request's own
	}
	if rec.Chunks > 0 {
		rec.OutputHash = "sha256:" + hex.EncodeToString(s.hash.Sum(nil))
		rec.ArrivalNs = s.arrival.Times(rec.FirstNs)
	}
	if !s.usage && rec.Chunks > 0 {
		// No usage: estimate. A stream stopped by max_tokens produced exactly
		// that many; otherwise each content chunk carried at least one token,
		// which is exact at one token per chunk and low when servers batch.
		rec.TokensEstimated = true
		rec.Tokens = rec.Chunks
		if rec.FinishReason == "length" && maxTokens > 0 {
			rec.Tokens = maxTokens
		}
	}
	switch {
	case s.perChunk:
		rec.MaxITLNs = s.maxITL
	case s.maxGap > 0 && rec.Tokens > rec.Chunks && rec.Chunks > 0:
		// Per-chunk counts unknown: spread by the stream's mean tokens per chunk.
		rec.MaxITLNs = s.maxGap * int64(rec.Chunks) / int64(rec.Tokens)
	default:
		rec.MaxITLNs = s.maxGap
	}
	rec.ITL = gaps(s.gaps, s.perChunk, rec.Tokens, rec.Chunks)
}

// maxErrorLen bounds a record's error message.
const maxErrorLen = 300

func shortError(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > maxErrorLen {
		s = s[:maxErrorLen] + "…"
	}
	return s
}

func sha256New() hash.Hash { return sha256.New() }
