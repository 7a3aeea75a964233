package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// chunk is the part of an OpenAI-compatible stream event the client reads:
// chat deltas (content, and reasoning_content from servers that split a
// reasoning model's thinking out), completion text, the usage object and an
// error object some servers send in place of a chunk when generation fails.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// doneMarker ends an OpenAI-compatible stream.
var doneMarker = []byte("[DONE]")

// parseChunk decodes one event's data into c, which is reset first.
func parseChunk(data []byte, c *chunk) error {
	// A fresh value: decoding into a reused slice would keep fields of
	// earlier chunks that this one does not mention.
	*c = chunk{}
	if err := json.Unmarshal(data, c); err != nil {
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
