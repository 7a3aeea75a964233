package server

import (
	"encoding/json"
	"net/http"

	"github.com/bakeoff-dev/bakeoff/sim/model"
)

// tokenizeRequest is SGLang's TokenizeRequest (entrypoints/openai/protocol.py,
// served by serving_tokenize.py at POST /v1/tokenize and, outside the
// schema, /tokenize): a model, a prompt that is a string or a list of
// strings, and add_special_tokens (default true). The sim's tokenizer has no
// special tokens to add, so the flag changes nothing and a prompt's count is
// the prompt_tokens a completion of that prompt reports.
type tokenizeRequest struct {
	Model            string          `json:"model"`
	Prompt           json.RawMessage `json:"prompt"`
	AddSpecialTokens *bool           `json:"add_special_tokens"`
}

// tokenize answers SGLang's tokenize call: {"tokens": [ids], "count": n,
// "max_model_len": L} for a string, lists of each for a list of strings.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	if s.phase.Load() != phaseReady {
		writeError(w, http.StatusServiceUnavailable, "The server is not ready.")
		return
	}
	var req tokenizeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(req.Prompt, &one) == nil:
		ids := model.TokenizeText(one)
		writeJSON(w, http.StatusOK, map[string]any{"tokens": ids, "count": len(ids), "max_model_len": s.cfg.ContextLength})
	case json.Unmarshal(req.Prompt, &many) == nil:
		tokens, counts := make([][]int32, len(many)), make([]int, len(many))
		for i, p := range many {
			tokens[i] = model.TokenizeText(p)
			counts[i] = len(tokens[i])
		}
		writeJSON(w, http.StatusOK, map[string]any{"tokens": tokens, "count": counts, "max_model_len": s.cfg.ContextLength})
	default:
		writeError(w, http.StatusBadRequest, "Invalid prompt type. Expected str or List[str].")
	}
}
