package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTerminalWidth: $COLUMNS decides when it holds a width; a file that is
// no terminal has no width (0: the renderer's default).
func TestTerminalWidth(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		columns string
		want    int
	}{
		{"100", 100},
		{"", 0},
		{"wide", 0},
		{"-5", 0},
	} {
		getenv := func(k string) string {
			if k == "COLUMNS" {
				return tc.columns
			}
			return ""
		}
		if got := terminalWidth(getenv, f); got != tc.want {
			t.Errorf("COLUMNS=%q: width %d, want %d", tc.columns, got, tc.want)
		}
	}
}
