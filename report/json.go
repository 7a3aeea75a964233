package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// JSON writes the whole verdict, indented; it reads back into a
// verdict.Verdict with ReadJSON.
func JSON(w io.Writer, v *verdict.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// ReadJSON reads a verdict written by JSON.
func ReadJSON(r io.Reader) (*verdict.Verdict, error) {
	var v verdict.Verdict
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return nil, fmt.Errorf("reading verdict JSON: %w", err)
	}
	return &v, nil
}
