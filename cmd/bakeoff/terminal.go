package main

import (
	"os"
	"strconv"

	"golang.org/x/term"
)

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// terminalWidth is the width to fit tables to: $COLUMNS when it holds a
// width (shells set it for their own use; exported, it is the user's
// choice), else the size of f when f is a terminal, else 0 (unknown: the
// renderer's default).
func terminalWidth(getenv func(string) string, f *os.File) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return w
	}
	return 0
}
