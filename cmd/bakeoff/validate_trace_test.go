package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateMalformedTrace: a trace that cannot be replayed fails validate
// with exit 2, naming the trace's file and line.
func TestValidateMalformedTrace(t *testing.T) {
	for _, tt := range []struct{ name, trace, want string }{
		{"bad JSON", `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [0]}` + "\n" + `{"timestamp": 5, "input_length":`, "trace.jsonl:2: "},
		{"decreasing timestamps", `{"timestamp": 5, "prompt": "a"}` + "\n\n" + `{"timestamp": 4, "prompt": "b"}`, "trace.jsonl:3: timestamp 4 is before the previous row's 5"},
		{"negative lengths", `{"timestamp": 0, "input_length": 10, "output_length": -2, "hash_ids": [0]}`, "trace.jsonl:1: output_length -2"},
		{"empty file", "", "trace.jsonl:1: no rows"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, data string) {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("configs/campaign.yaml", "campaign: t\nhost: local\nsweep:\n  speeds: [1]\n  trace: trace.jsonl\nbaseline: a\nscenarios: [a]\n")
			write("scenarios/a.yaml", "engine: sglang\nmodel: /m\n")
			write("configs/trace.jsonl", tt.trace)
			e, out, errOut := testEnv()
			code := run(context.Background(), e, []string{"validate", filepath.Join(dir, "configs/campaign.yaml")})
			if code != exitBadInput {
				t.Errorf("exit %d, want %d; stdout:\n%s", code, exitBadInput, out)
			}
			if !strings.Contains(errOut.String(), "sweep.trace: "+filepath.Join(dir, "configs", tt.want)) {
				t.Errorf("stderr:\n%s\nwant it to name %s", errOut, tt.want)
			}
		})
	}
}
