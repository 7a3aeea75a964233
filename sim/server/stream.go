package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/bakeoff-dev/bakeoff/sim/model"
)

// stream is one completion in flight: it submits the request to the engine
// and turns each delivery (one scheduler step) into one SSE chunk, so the
// accepted tokens of a verify step arrive together; with --stream-interval
// above 1, the tokens of the steps between two intervals go out together.
type stream struct {
	s            *Server
	chat         bool
	model        string
	g            genRequest
	includeUsage bool
	// specDetails answers return_spec_tokens_details (spec.go).
	specDetails bool
	id          string
	obs         latencyObserver
	// A disaggregated request (disagg.go): firstOnly ends it at its first
	// token (a prefill worker), whose room is marked once it is there.
	firstOnly bool
	room      *uint64
}

func newStream(s *Server, chat bool, model string, g genRequest) *stream {
	if model == "" {
		model = s.cfg.ModelName()
	}
	return &stream{s: s, chat: chat, model: model, g: g}
}

// run submits the request and calls emit for every delivery, in order,
// with the text of its tokens. It returns the job and finish reason, or
// ok=false when the client left or the server died (the handler then aborts).
func (st *stream) run(r *http.Request, emit func(text string, done bool) error) (*model.Job, string, bool) {
	target, reason := st.g.target()
	if st.firstOnly {
		target, reason = 1, "length"
	}
	if st.obs.start.IsZero() {
		st.obs.start = st.s.now() // a decode worker's began before its KV arrived
	}
	job, ch, cancel := st.s.engine.Submit(model.Job{PromptTokens: st.g.promptTokens, Target: target,
		Prompt: st.g.ids, Sequence: st.sequence})
	defer cancel()
	prefilled := false
	defer func() { st.s.kv.finish(st.room, st.g.promptTokens, prefilled) }()
	st.id = fmt.Sprintf("%032x", job.ID)
	produced, sent := 0, 0
	for {
		select {
		case d := <-ch:
			produced += d.Tokens
			if !d.Send && !d.Done && sent > 0 {
				continue
			}
			text := st.g.key.Tokens(sent, produced, st.g.wrong)
			st.obs.chunk(d.At, produced-sent)
			sent = produced
			if err := emit(text, d.Done); err != nil {
				return job, reason, false
			}
			prefilled = true
			if d.Done {
				st.s.stats.Finished(st.obs.first.Sub(st.obs.start), d.At.Sub(st.obs.start), st.obs.gaps, job)
				return job, reason, true
			}
		case <-r.Context().Done():
			return job, reason, false
		case <-st.s.dead:
			st.s.hangUp()
		}
	}
}

// sequence is what the prefix cache keeps once the request has generated n
// tokens: its prompt and its output as the next turn sends them back.
func (st *stream) sequence(n int) []int32 {
	return model.OutputIDs(st.g.chat, st.g.ids, st.g.text, st.g.key.Tokens(0, n, st.g.wrong))
}

// object is the OpenAI object type of the stream's chunks.
func (st *stream) object() string {
	if st.chat {
		return "chat.completion.chunk"
	}
	return "text_completion"
}

// chunk builds one SSE event body.
func (st *stream) chunk(text string, first bool, finish any) map[string]any {
	choice := map[string]any{"index": 0, "logprobs": nil, "finish_reason": finish}
	if st.chat {
		delta := map[string]any{}
		if first {
			delta["role"] = "assistant"
		}
		if text != "" || first {
			delta["content"] = text
		}
		choice["delta"] = delta
	} else {
		choice["text"] = text
	}
	return map[string]any{"id": st.id, "object": st.object(), "created": st.s.created, "model": st.model,
		"choices": []any{choice}, "usage": nil}
}

// usage is the OpenAI usage of the finished job. Like SGLang
// (usage_processor.py), it reports the cached prompt tokens only when the
// server runs with --enable-cache-report, and only when there are some.
func (st *stream) usage(job *model.Job) map[string]any {
	u := map[string]any{"prompt_tokens": st.g.promptTokens, "completion_tokens": job.Generated,
		"total_tokens": st.g.promptTokens + job.Generated}
	if st.s.cfg.EnableCacheReport && job.Cached > 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": job.Cached}
	}
	return u
}

// sglext is SGLang's response-level extension: the request's speculative
// details when it asked for them; nil when there is nothing to say.
func (st *stream) sglext(job *model.Job) map[string]any {
	if !st.specDetails {
		return nil
	}
	return map[string]any{"spec_tokens_details": job.Spec.Details(job.Generated, st.s.cfg.DraftTokens())}
}

// serveStream answers with server-sent events ending in `data: [DONE]`.
func (st *stream) serveStream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	var buf strings.Builder
	send := func(v any) {
		b, _ := json.Marshal(v)
		buf.WriteString("data: ")
		buf.Write(b)
		buf.WriteString("\n\n")
	}
	flush := func() error {
		_, err := w.Write([]byte(buf.String()))
		buf.Reset()
		if flusher != nil {
			flusher.Flush()
		}
		return err
	}
	first := true
	job, reason, ok := st.run(r, func(text string, done bool) error {
		if first && st.chat {
			send(st.chunk("", true, nil))
		}
		first = false
		send(st.chunk(text, false, nil))
		return flush()
	})
	if !ok {
		return
	}
	send(st.chunk("", false, reason))
	// As SGLang streams them: the sglext chunk after the finish, before
	// the usage chunk, both with empty choices.
	if ext := st.sglext(job); ext != nil {
		send(map[string]any{"id": st.id, "object": st.object(), "created": st.s.created,
			"model": st.model, "choices": []any{}, "usage": nil, "sglext": ext})
	}
	if st.includeUsage {
		send(map[string]any{"id": st.id, "object": st.object(), "created": st.s.created,
			"model": st.model, "choices": []any{}, "usage": st.usage(job)})
	}
	buf.WriteString("data: [DONE]\n\n")
	if flush() == nil {
		st.s.answeredOne()
	}
}

// collect runs the request to the end and returns its whole text.
func (st *stream) collect(r *http.Request) (string, *model.Job, string, bool) {
	var b strings.Builder
	job, reason, ok := st.run(r, func(text string, _ bool) error {
		b.WriteString(text)
		return nil
	})
	return b.String(), job, reason, ok
}

// serveWhole answers a non-streaming request with one JSON body.
func (st *stream) serveWhole(w http.ResponseWriter, r *http.Request) {
	text, job, reason, ok := st.collect(r)
	if !ok {
		return
	}
	choice := map[string]any{"index": 0, "logprobs": nil, "finish_reason": reason}
	obj := "text_completion"
	if st.chat {
		obj = "chat.completion"
		choice["message"] = map[string]any{"role": "assistant", "content": text}
	} else {
		choice["text"] = text
	}
	body := map[string]any{"id": st.id, "object": obj, "created": st.s.created,
		"model": st.model, "choices": []any{choice}, "usage": st.usage(job)}
	if ext := st.sglext(job); ext != nil {
		body["sglext"] = ext
	}
	writeJSON(w, http.StatusOK, body)
	st.s.answeredOne()
}
