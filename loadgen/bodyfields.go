package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// withFields adds fields to the JSON object body: the engine's own request
// fields (engine.Profile.AcceptRequest), after the common ones, in sorted
// order, so that every request of every scenario of an engine is the same
// bytes. A field the body already has is left as it is.
func withFields(body []byte, fields map[string]any) ([]byte, error) {
	if len(fields) == 0 {
		return body, nil
	}
	var have map[string]json.RawMessage
	if err := json.Unmarshal(body, &have); err != nil {
		return nil, fmt.Errorf("adding the engine's request fields: %w", err)
	}
	extra := map[string]any{}
	for k, v := range fields {
		if _, ok := have[k]; !ok {
			extra[k] = v
		}
	}
	if len(extra) == 0 {
		return body, nil
	}
	more, err := json.Marshal(extra) // map keys come out sorted
	if err != nil {
		return nil, fmt.Errorf("adding the engine's request fields: %w", err)
	}
	body = bytes.TrimRight(body, " \n")
	if len(body) < 2 || body[len(body)-1] != '}' {
		return nil, fmt.Errorf("adding the engine's request fields: the body is not a JSON object")
	}
	out := append([]byte{}, body[:len(body)-1]...)
	if len(have) > 0 {
		out = append(out, ',')
	}
	return append(out, more[1:]...), nil
}
