package loadgen

import (
	"bytes"
	"fmt"
)

// chunk is the part of an OpenAI-compatible stream event the client reads:
// chat deltas (content, and the thinking of a reasoning model that the
// server splits out: reasoning, or reasoning_content), completion text, the usage object and an
// error object some servers send in place of a chunk when generation fails,
// and the objects in which servers give a response's own speculative
// counts (timings, sglext, metrics: chunkaccept.go;
// engine.Profile.ResponseAccept says whose).
type chunk struct {
	Choices []choice     `json:"choices"`
	Usage   *usage       `json:"usage"`
	Error   *streamError `json:"error"`
	Timings *timings     `json:"timings"`
	Sglext  *sglext      `json:"sglext"`
	Metrics *respMetrics `json:"metrics"`
}

type choice struct {
	Delta struct {
		Content string `json:"content"`
		// A reasoning model's thinking, which a server with a reasoning
		// parser streams apart from the answer: vLLM as reasoning (PR
		// #27752, 2025-11; reasoning_content was removed by PR #33402,
		// 2026-01), SGLang and older vLLM as reasoning_content. Thinking is
		// output: it counts for the first token, the gaps and the hash.
		Reasoning        string `json:"reasoning"`
		ReasoningContent string `json:"reasoning_content"`
	} `json:"delta"`
	Text         string  `json:"text"`
	FinishReason *string `json:"finish_reason"`
}

// thinking is the delta's reasoning text under either name, counted once
// when a server sends both.
func (c *choice) thinking() string {
	if c.Delta.ReasoningContent != "" {
		return c.Delta.ReasoningContent
	}
	return c.Delta.Reasoning
}

type usage struct {
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details"`
}

// promptDetails says how much of the prompt came from the prefix cache
// (llama.cpp; SGLang with --enable-cache-report; vLLM only with
// --enable-prompt-tokens-details, off by default).
type promptDetails struct {
	CachedTokens *int `json:"cached_tokens"`
}

// timings is the part of a response's timings the records keep: how many
// tokens were drafted for speculative decoding and how many were accepted.
type timings struct {
	DraftN         *int `json:"draft_n"`
	DraftNAccepted *int `json:"draft_n_accepted"`
}

type streamError struct {
	Message string `json:"message"`
}

// doneMarker ends an OpenAI-compatible stream.
var doneMarker = []byte("[DONE]")

// parseChunk decodes one event's data into c, which is reset first; the
// JSON tags above document the shape, which decodeChunk reads by hand.
func parseChunk(data []byte, c *chunk) error {
	*c = chunk{Choices: c.Choices[:0]}
	var s scanner
	if err := decodeChunk(data, c, &s); err != nil {
		return fmt.Errorf("bad chunk JSON: %w (%s)", err, excerpt(data))
	}
	return nil
}

// excerptBytes bounds how much of a bad payload goes into an error message.
const excerptBytes = 120

func excerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > excerptBytes {
		return fmt.Sprintf("%q…", b[:excerptBytes])
	}
	return fmt.Sprintf("%q", b)
}
