package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/model"
)

// tokenized is SGLang's TokenizeResponse for one string.
type tokenized struct {
	Tokens      []int `json:"tokens"`
	Count       int   `json:"count"`
	MaxModelLen int   `json:"max_model_len"`
}

func postJSON(t *testing.T, url string, body any, v any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		json.NewDecoder(resp.Body).Decode(v)
	}
	return resp.StatusCode
}

// TestTokenizeRoundTrip: /v1/tokenize counts a prompt as the completion
// reports its prompt_tokens; the ids it returns, sent as the prompt, are
// the same prompt (the same count, and a prefix-cache hit on the text's
// tokens); /tokenize is the same call; lists tokenize item by item; ids
// outside the vocabulary are refused.
func TestTokenizeRoundTrip(t *testing.T) {
	p := startSim(t, nil, append(strings.Fields(simtest.Baseline), "--sim-prefix-cache", "--enable-cache-report", "--page-size", "1")...)
	p.waitHealthy()
	for _, prompt := range []string{"Once upon", "", "héllo wörld", strings.Repeat("The quick brown fox. ", 40)} {
		var tok, legacy tokenized
		if code := postJSON(t, p.url("/v1/tokenize"), map[string]any{"model": "m", "prompt": prompt}, &tok); code != 200 {
			t.Fatalf("%.20q: /v1/tokenize status %d", prompt, code)
		}
		postJSON(t, p.url("/tokenize"), map[string]any{"model": "m", "prompt": prompt, "add_special_tokens": false}, &legacy)
		if tok.Count != len(tok.Tokens) || tok.MaxModelLen != cmdline.DefaultContextLength || len(legacy.Tokens) != tok.Count {
			t.Errorf("%.20q: %+v, /tokenize %+v", prompt, tok, legacy)
		}
		var text, ids struct {
			Usage map[string]any `json:"usage"`
		}
		postJSON(t, p.url("/v1/completions"), map[string]any{"prompt": prompt, "max_tokens": 3, "temperature": 0}, &text)
		if code := postJSON(t, p.url("/v1/completions"), map[string]any{"prompt": tok.Tokens, "max_tokens": 3, "temperature": 0}, &ids); code != 200 {
			t.Fatalf("%.20q: a prompt of ids: status %d", prompt, code)
		}
		for name, u := range map[string]map[string]any{"text": text.Usage, "ids": ids.Usage} {
			if u["prompt_tokens"] != float64(tok.Count) {
				t.Errorf("%.20q as %s: prompt_tokens %v, /v1/tokenize counted %d", prompt, name, u["prompt_tokens"], tok.Count)
			}
		}
		if got := cachedOf(ids.Usage); tok.Count > 1 && got != tok.Count-1 {
			t.Errorf("%.20q: the ids found %d cached tokens of the text's %d, want all but the last", prompt, got, tok.Count)
		}
	}

	// A chat prompt counts its messages' tokens and the template's.
	var chat struct {
		Usage map[string]any `json:"usage"`
	}
	postJSON(t, p.url("/v1/chat/completions"), map[string]any{"max_tokens": 2, "messages": []any{
		map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "Why?"}}}, &chat)
	var sys, user tokenized
	postJSON(t, p.url("/v1/tokenize"), map[string]any{"prompt": "Be brief."}, &sys)
	postJSON(t, p.url("/v1/tokenize"), map[string]any{"prompt": "Why?"}, &user)
	if want := sys.Count + user.Count + 2*model.ChatTemplateTokens; chat.Usage["prompt_tokens"] != float64(want) {
		t.Errorf("chat prompt_tokens %v, want %d", chat.Usage["prompt_tokens"], want)
	}

	var batch struct {
		Tokens [][]int `json:"tokens"`
		Count  []int   `json:"count"`
	}
	postJSON(t, p.url("/v1/tokenize"), map[string]any{"prompt": []string{"ab", "abcdefghi"}}, &batch)
	if len(batch.Tokens) != 2 || batch.Count[0] != 1 || batch.Count[1] != 3 || len(batch.Tokens[1]) != 3 {
		t.Errorf("a list of prompts: %+v", batch)
	}
	for _, bad := range []any{[]int{1, model.VocabSize}, []int{-1}, []int{}, map[string]any{"x": 1}} {
		if code := postJSON(t, p.url("/v1/completions"), map[string]any{"prompt": bad, "max_tokens": 1}, nil); code != 400 {
			t.Errorf("prompt %v: status %d, want 400", bad, code)
		}
	}
	if code := postJSON(t, p.url("/v1/tokenize"), map[string]any{"prompt": 5}, nil); code != 400 {
		t.Errorf("/v1/tokenize of a number: status %d, want 400", code)
	}
}
