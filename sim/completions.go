package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
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
	prompt       string
	promptTokens int
	maxTokens    int // 0: until end of sequence
	ignoreEOS    bool
	key          textKey
	wrong        bool
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
func (s *Server) sampleKey(prompt string, temperature *float64, seed *int64) textKey {
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
	return newTextKey(prompt, sd)
}

func (s *Server) parseCompletion(chat bool, req *completionRequest) (genRequest, error) {
	var g genRequest
	if chat {
		if len(req.Messages) == 0 {
			return g, fmt.Errorf("messages must not be empty")
		}
		var b strings.Builder
		for _, m := range req.Messages {
			t := m.text()
			b.WriteString(m.Role + ": " + t + "\n")
			g.promptTokens += countTokens(t) + chatTemplateTokens
		}
		g.prompt = b.String()
	} else {
		var p string
		if err := json.Unmarshal(req.Prompt, &p); err != nil {
			var list []string
			if err := json.Unmarshal(req.Prompt, &list); err != nil || len(list) != 1 {
				return g, fmt.Errorf("prompt must be a string")
			}
			p = list[0]
		}
		g.prompt = p
		g.promptTokens = countTokens(p)
		g.maxTokens = defaultCompletionMaxTokens
	}
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
	g := genRequest{prompt: req.Text, promptTokens: countTokens(req.Text), maxTokens: 128, ignoreEOS: req.SamplingParams.IgnoreEOS,
		key: s.sampleKey(req.Text, req.SamplingParams.Temperature, nil), wrong: s.cfg.Sim.Faults.WrongOutput}
	if req.SamplingParams.MaxNewTokens != nil {
		g.maxTokens = *req.SamplingParams.MaxNewTokens
	}
	st := newStream(s, false, "", g)
	start := s.now()
	text, job, reason, ok := st.collect(r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"text": text,
		"meta_info": map[string]any{
			"id": fmt.Sprintf("%032x", job.ID), "finish_reason": map[string]any{"type": reason, "length": job.Generated},
			"prompt_tokens": g.promptTokens, "completion_tokens": job.Generated, "cached_tokens": 0,
			"e2e_latency": s.now().Sub(start).Seconds(), "spec_verify_ct": job.VerifySteps,
		},
	})
	s.answeredOne()
}

// latencyObserver gathers one request's timings for the histograms.
type latencyObserver struct {
	start, first, last time.Time
	gaps               []tokenGap
}

func (o *latencyObserver) chunk(at time.Time, tokens int) {
	if o.first.IsZero() {
		o.first = at
	} else if tokens > 0 {
		o.gaps = append(o.gaps, tokenGap{gap: at.Sub(o.last), tokens: tokens})
	}
	o.last = at
}
