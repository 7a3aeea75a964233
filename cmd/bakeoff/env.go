package main

import (
	"io"
	"os"
	"time"
)

// env is the process boundary: everything a subcommand needs from the
// outside world. Tests build one with buffers; only main uses os.* directly.
type env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Now    func() time.Time
	// IsTerminal reports whether Stdout is an interactive terminal, which
	// decides between a live progress display and plain timestamped lines.
	IsTerminal bool
	// Executable is the path of the running bakeoff binary; the orchestrator
	// launches it as the simulated engine and uploads it to run sweeps.
	Executable string
}

func newEnv() *env {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return &env{
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		Now:        time.Now,
		IsTerminal: isTerminal(os.Stdout),
		Executable: exe,
	}
}
