package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// TokenizeCall is an engine's own tokenize endpoint: the text in, the token
// ids of the served model's tokenizer out, so that prompt lengths in tokens
// are exact rather than estimated from words. Special tokens (a BOS) are
// not added: the ids are the prompt's own, which is what a prompt sent as
// token ids carries.
type TokenizeCall struct {
	Path string // e.g. /v1/tokenize
	// Body is the request for text; model is the served model's name.
	Body func(model, text string) any
}

// tokenizeAnswer is the part of the answer every engine here shares:
// SGLang's {"tokens", "count", "max_model_len"}, vLLM's the same, and
// llama.cpp's {"tokens"} (ids, without with_pieces).
type tokenizeAnswer struct {
	Tokens []int `json:"tokens"`
}

// Tokenize returns text's token ids through the profile's call.
func (p *Profile) Tokenize(ctx context.Context, c *http.Client, base, apiKey, model, text string) ([]int, error) {
	if p.TokenizeCall == nil {
		return nil, fmt.Errorf("engine %s has no tokenize call", p.Name)
	}
	body, err := json.Marshal(p.TokenizeCall.Body(model, text))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+p.TokenizeCall.Path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", p.TokenizeCall.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", p.TokenizeCall.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: status %d: %s", p.TokenizeCall.Path, resp.StatusCode, excerpt(data))
	}
	var a tokenizeAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("POST %s: reading the answer: %w", p.TokenizeCall.Path, err)
	}
	return a.Tokens, nil
}

// The tokenize calls, read in each engine's sources:
//   - SGLang: POST /v1/tokenize (entrypoints/openai/serving_tokenize.py)
//     {"model", "prompt", "add_special_tokens"} → {"tokens", "count",
//     "max_model_len"};
//   - vLLM: POST /tokenize (entrypoints/openai/api_server.py,
//     TokenizeCompletionRequest) with the same body and answer;
//   - llama.cpp llama-server: POST /tokenize (tools/server)
//     {"content", "add_special", "with_pieces"} → {"tokens"}.
var (
	openAITokenize = func(model, text string) any {
		return map[string]any{"model": model, "prompt": text, "add_special_tokens": false}
	}
	sglangTokenize   = &TokenizeCall{Path: "/v1/tokenize", Body: openAITokenize}
	vllmTokenize     = &TokenizeCall{Path: "/tokenize", Body: openAITokenize}
	llamacppTokenize = &TokenizeCall{Path: "/tokenize", Body: func(_, text string) any {
		return map[string]any{"content": text, "add_special": false}
	}}
)

// Lengths says how a prompt asked for in tokens is made that long against
// this engine: as token ids (completions, where the engine takes them), by
// cutting text with its tokenize call, or estimated from words where it
// has none. It is what validate and the manifest show.
func (p *Profile) Lengths(completions bool) string {
	switch {
	case p.TokenizeCall == nil:
		return "estimated (4/3 tokens per word): no tokenize call"
	case completions && p.TokenPrompts:
		return "exact: token ids (a synthetic set's text cut through POST " + p.TokenizeCall.Path + ")"
	}
	return "exact where the words allow: text cut through POST " + p.TokenizeCall.Path
}
