package loadgen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// reasoningServer streams a chat answer the way a server with a reasoning
// parser does: a role chunk, the thinking in deltas of their own (field
// names the field, or fields, each carries), a pause, the answer in content
// deltas, the finish chunk and the usage chunk. vLLM's DeltaMessage is
// {role, content, reasoning, tool_calls} (vllm/entrypoints/openai/engine/
// protocol.py, after PR #33402); SGLang and vLLM before PR #27752 send
// reasoning_content.
func reasoningServer(t *testing.T, fields []string, thinking, answer []string, pause time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		send := func(data string) {
			fmt.Fprintf(w, "data: %s\n\n", data)
			fl.Flush()
		}
		const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"qwen3",`
		send(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`)
		for _, t := range thinking {
			var kv []string
			for _, f := range fields {
				kv = append(kv, fmt.Sprintf("%q:%q", f, t))
			}
			send(head + `"choices":[{"index":0,"delta":{` + strings.Join(kv, ",") + `},"logprobs":null,"finish_reason":null}]}`)
		}
		time.Sleep(pause)
		for _, a := range answer {
			send(head + fmt.Sprintf(`"choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}]}`, a))
		}
		send(head + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`)
		n := len(thinking) + len(answer)
		send(head + fmt.Sprintf(`"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":%d,"total_tokens":%d}}`, n, 9+n))
		send("[DONE]")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestReasoningIsOutput: a reasoning model's thinking is output, whichever
// field carries it: the first token is the first thought, every thinking
// chunk is a chunk with its gaps and arrival marks, and the output hash
// covers it. A server that sends both names (a compatibility shim) is
// counted once.
func TestReasoningIsOutput(t *testing.T) {
	const pause = 300 * time.Millisecond
	thinking := []string{"Let", " me", " think", "."}
	answer := []string{"Paris", "."}
	for _, tt := range []struct {
		name   string
		fields []string
		answer []string
	}{
		{"vllm reasoning", []string{"reasoning"}, answer},
		{"reasoning_content", []string{"reasoning_content"}, answer},
		{"both names", []string{"reasoning", "reasoning_content"}, answer},
		// Stopped by max_tokens while still thinking: no answer at all.
		{"vllm all thinking", []string{"reasoning"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := reasoningServer(t, tt.fields, thinking, tt.answer, pause)
			rec := doOnce(t, srv.URL+"/v1/chat/completions", 10*time.Second)
			if !rec.OK() {
				t.Fatalf("request failed: %s: %s", rec.ErrClass, rec.Error)
			}
			n := len(thinking) + len(tt.answer)
			if rec.Chunks != n {
				t.Errorf("chunks %d, want %d (the thinking ones included)", rec.Chunks, n)
			}
			if ttft := rec.TTFT(); ttft >= pause {
				t.Errorf("TTFT %v, want the first thought, before the %v pause ahead of the answer", ttft, pause)
			}
			sum := sha256.Sum256([]byte(strings.Join(append(append([]string{}, thinking...), tt.answer...), "")))
			if want := "sha256:" + hex.EncodeToString(sum[:]); rec.OutputHash != want {
				t.Errorf("hash %s, want %s: the thinking once, then the answer", rec.OutputHash, want)
			}
			if len(rec.ArrivalNs) != measure.ArrivalFractions-1 {
				t.Errorf("arrival marks %v, want %d", rec.ArrivalNs, measure.ArrivalFractions-1)
			}
			if got := len(rec.ITL); got != n-1 {
				t.Errorf("%d inter-token gaps, want %d", got, n-1)
			}
		})
	}
}
