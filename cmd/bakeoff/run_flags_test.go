package main

import (
	"io"
	"strings"
	"testing"
)

// TestParseRunFlags: --into is --resume under the name a rerun into an
// existing run goes by; it cannot name a second run or go with --out.
func TestParseRunFlags(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       string
		wantResume string
		wantOnly   string
		wantErr    string
	}{
		{"resume", "c.yaml --resume r", "r", "", ""},
		{"into", "c.yaml --only b --into r", "r", "b", ""},
		{"into before config", "--into r --only b c.yaml", "r", "b", ""},
		{"into and resume agree", "c.yaml --into r --resume r", "r", "", ""},
		{"into and resume differ", "c.yaml --into r --resume s", "", "", "name different runs"},
		{"into and out", "c.yaml --into r --out o", "", "", "exclusive"},
		{"no config", "--into r", "", "", "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseRunFlags(strings.Fields(tc.args), io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.resume != tc.wantResume || f.only != tc.wantOnly || f.config != "c.yaml" {
				t.Errorf("resume %q only %q config %q, want %q %q c.yaml", f.resume, f.only, f.config, tc.wantResume, tc.wantOnly)
			}
		})
	}
}
