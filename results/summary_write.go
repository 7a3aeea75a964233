package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// WriteSummaryAtomic writes the summary to path atomically, byte for byte
// as WriteJSONAtomic would, but one launch at a time. The summary is
// rewritten after every launch and grows with them; marshalled whole, it
// needs a buffer of its full size each time, and encoding/json keeps that
// buffer in its pool between calls, so a long campaign would hold a copy
// of its summary's bytes for good.
func WriteSummaryAtomic(path string, s *Summary) error {
	return WriteAtomic(path, func(w io.Writer) error { return writeSummaryJSON(w, s) })
}

// scenariosField is where the indented summary holds its scenarios: a
// top-level key, two spaces in, that no escaped string value can contain.
const scenariosField = "\n  \"scenarios\": null"

// writeSummaryJSON writes s as json.MarshalIndent(s, "", "  ") and a newline:
// the summary without its scenarios, with the array written element by
// element in their place.
func writeSummaryJSON(w io.Writer, s *Summary) error {
	shell := *s
	shell.Scenarios = nil
	head, err := json.MarshalIndent(&shell, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the summary: %w", err)
	}
	at := bytes.Index(head, []byte(scenariosField))
	if at < 0 {
		return fmt.Errorf("encoding the summary: no %q field", "scenarios")
	}
	at += len(scenariosField) - len("null")
	if _, err := w.Write(head[:at]); err != nil {
		return err
	}
	switch {
	case s.Scenarios == nil:
		_, err = io.WriteString(w, "null")
	case len(s.Scenarios) == 0:
		_, err = io.WriteString(w, "[]")
	default:
		err = writeScenarios(w, s.Scenarios)
	}
	if err != nil {
		return err
	}
	if _, err := w.Write(head[at+len("null"):]); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// writeScenarios writes a non-empty array at the summary's second level.
func writeScenarios(w io.Writer, list []ScenarioResult) error {
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	for i := range list {
		b, err := json.MarshalIndent(&list[i], "    ", "  ")
		if err != nil {
			return fmt.Errorf("encoding the summary's %s round %d: %w", list[i].Name, list[i].RoundOf(), err)
		}
		sep := ",\n    "
		if i == 0 {
			sep = "\n    "
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n  ]")
	return err
}
