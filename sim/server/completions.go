package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/model"
)

// defaultCompletionMaxTokens is the OpenAI default max_tokens of
// /v1/completions; chat requests without it run to their end of sequence.
const defaultCompletionMaxTokens = 16

// completionRequest is the part of an OpenAI request the sim reads.
type completionRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS   bool     `json:"ignore_eos"`
	Temperature *float64 `json:"temperature"`
	Seed        *int64   `json:"seed"`
	// ReturnSpecTokensDetails asks for sglext.spec_tokens_details (SGLang
	// PR #33518; spec.go).
	ReturnSpecTokensDetails bool `json:"return_spec_tokens_details"`
	// The router's fields of a disaggregated request (disagg.go).
	bootstrapFields
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text flattens a message's content, a string or a list of text parts.
func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// genRequest is a request reduced to what generation needs.
type genRequest struct {
	prompt       string // what the output text is derived from
	promptTokens int
	// ids is the prompt as token ids (the prefix cache's key), and text the
	// prompt text of a completion ("" for chat and for a prompt of ids).
	ids       []int32
	text      string
	chat      bool
	maxTokens int // 0: until end of sequence
	ignoreEOS bool
	key       model.TextKey
	wrong     bool
}

// target is how many tokens the request generates and why it stops.
func (g genRequest) target() (int, string) {
	natural := g.key.NaturalLength()
	switch {
	case g.maxTokens > 0 && (g.ignoreEOS || g.maxTokens <= natural):
		return g.maxTokens, "length"
	default:
		return natural, "stop"
	}
}

// sampleKey picks the text: greedy requests (temperature 0) and seeded ones
// are deterministic; others draw a fresh seed.
func (s *Server) sampleKey(prompt string, temperature *float64, seed *int64) model.TextKey {
	greedy := temperature != nil && *temperature == 0
	var sd int64
	switch {
	case greedy:
		sd = 0
	case seed != nil:
		sd = *seed
	default:
		s.rngMu.Lock()
		sd = s.rng.Int64()
		s.rngMu.Unlock()
	}
	return model.NewTextKey(prompt, sd)
}

func (s *Server) parseCompletion(chat bool, req *completionRequest) (genRequest, error) {
	g := genRequest{chat: chat}
	if chat {
		if len(req.Messages) == 0 {
			return g, fmt.Errorf("messages must not be empty")
		}
		var b strings.Builder
		for _, m := range req.Messages {
			t := m.text()
			b.WriteString(m.Role + ": " + t + "\n")
			g.ids = append(g.ids, model.MessageIDs(m.Role, t)...)
		}
		g.prompt = b.String()
	} else {
		p, ids, err := parsePrompt(req.Prompt)
		if err != nil {
			return g, err
		}
		g.prompt, g.text, g.ids = p, p, ids
		if ids == nil {
			g.ids = model.TokenizeText(p)
		} else {
			g.prompt = idsText(ids)
		}
		g.maxTokens = defaultCompletionMaxTokens
	}
	// Counted from the ids, so that /v1/tokenize's count is the prompt_tokens
	// reported (countTokens per message plus the template's tokens for chat).
	g.promptTokens = len(g.ids)
	if req.MaxTokens != nil {
		g.maxTokens = *req.MaxTokens
	} else if req.MaxCompletionTokens != nil {
		g.maxTokens = *req.MaxCompletionTokens
	}
	if g.maxTokens < 0 {
		return g, fmt.Errorf("max_tokens must be non-negative")
	}
	g.ignoreEOS = req.IgnoreEOS
	g.key = s.sampleKey(g.prompt, req.Temperature, req.Seed)
	g.wrong = s.cfg.Sim.Faults.WrongOutput
	return g, nil
}

// parsePrompt reads a completion's prompt as OpenAI and SGLang accept it: a
// string, or token ids (SGLang's CompletionRequest.prompt is a string, a list
// of strings, a list of ids or a list of lists of ids; the sim takes one
// prompt per request). It returns the text, or the ids when the prompt is
// ids.
func parsePrompt(raw json.RawMessage) (string, []int32, error) {
	var p string
	if json.Unmarshal(raw, &p) == nil {
		return p, nil, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil && len(list) == 1 {
		return list[0], nil, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) != nil {
		var batch [][]int64
		if json.Unmarshal(raw, &batch) != nil || len(batch) != 1 {
			return "", nil, fmt.Errorf("prompt must be a string or a list of token ids")
		}
		ids = batch[0]
	}
	if len(ids) == 0 {
		return "", nil, fmt.Errorf("prompt must not be empty")
	}
	out := make([]int32, len(ids))
	for i, id := range ids {
		if id < 0 || id >= model.VocabSize {
			return "", nil, fmt.Errorf("token id %d at position %d is outside the vocabulary [0, %d)", id, i, model.VocabSize)
		}
		out[i] = int32(id)
	}
	return "", out, nil
}

// idsText stands for a prompt of ids where the output text is derived from
// the prompt: the same ids give the same text.
func idsText(ids []int32) string {
	var b strings.Builder
	b.WriteString("ids:")
	for _, id := range ids {
		fmt.Fprintf(&b, " %d", id)
	}
	return b.String()
}

// completions serves /v1/chat/completions (chat) and /v1/completions.
func (s *Server) completions(chat bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req completionRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
			return
		}
		g, err := s.parseCompletion(chat, &req)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if !s.admit(w) {
			return
		}
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		st := newStream(s, chat, req.Model, g)
		if !s.disaggregate(w, r, st, req.bootstrapFields) {
			return
		}
		st.specDetails = req.ReturnSpecTokensDetails && s.cfg.Speculative()
		if req.Stream {
			st.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
			st.serveStream(w, r)
			return
		}
		st.serveWhole(w, r)
	}
}

// generateRequest is SGLang's native /generate body.
type generateRequest struct {
	Text           string `json:"text"`
	SamplingParams struct {
		MaxNewTokens *int     `json:"max_new_tokens"`
		Temperature  *float64 `json:"temperature"`
		IgnoreEOS    bool     `json:"ignore_eos"`
	} `json:"sampling_params"`
	bootstrapFields
}

// generate serves SGLang's native, non-streaming /generate.
func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	var req generateRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if !s.admit(w) {
		return
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	ids := model.TokenizeText(req.Text)
	g := genRequest{prompt: req.Text, promptTokens: len(ids), ids: ids, text: req.Text, maxTokens: 128, ignoreEOS: req.SamplingParams.IgnoreEOS,
		key: s.sampleKey(req.Text, req.SamplingParams.Temperature, nil), wrong: s.cfg.Sim.Faults.WrongOutput}
	if req.SamplingParams.MaxNewTokens != nil {
		g.maxTokens = *req.SamplingParams.MaxNewTokens
	}
	st := newStream(s, false, "", g)
	start := s.now()
	if !s.disaggregate(w, r, st, req.bootstrapFields) {
		return
	}
	text, job, reason, ok := st.collect(r)
	if !ok {
		return
	}
	meta := map[string]any{
		"id": fmt.Sprintf("%032x", job.ID), "finish_reason": map[string]any{"type": reason, "length": job.Generated},
		"prompt_tokens": g.promptTokens, "completion_tokens": job.Generated, "cached_tokens": job.Cached,
		"e2e_latency": s.now().Sub(start).Seconds(), "spec_verify_ct": job.VerifySteps,
	}
	if s.cfg.Speculative() {
		for k, v := range job.Spec.Details(job.Generated, s.cfg.DraftTokens()) {
			meta[k] = v
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"text": text, "meta_info": meta})
	s.answeredOne()
}

// latencyObserver gathers one request's timings for the histograms.
type latencyObserver struct {
	start, first, last time.Time
	gaps               []model.TokenGap
}

func (o *latencyObserver) chunk(at time.Time, tokens int) {
	if o.first.IsZero() {
		o.first = at
	} else if tokens > 0 {
		o.gaps = append(o.gaps, model.TokenGap{Gap: at.Sub(o.last), Tokens: tokens})
	}
	o.last = at
}
