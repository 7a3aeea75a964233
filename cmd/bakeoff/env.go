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
	// LookupEnv tells a variable set empty from one unset, where Getenv
	// cannot (CUDA_VISIBLE_DEVICES empty is no GPU, unset every GPU); nil
	// in tests means every empty variable is unset.
	LookupEnv func(string) (string, bool)
	Now       func() time.Time
	// IsTerminal reports whether Stdout is an interactive terminal, which
	// decides between a live progress display and plain timestamped lines.
	IsTerminal bool
	// TermWidth is the width of the terminal in columns, asked when a table
	// is drawn (a window may have been resized since the start), or 0 when
	// unknown; nil in tests means unknown.
	TermWidth func() int
	// Executable is the path of the running bakeoff binary; the orchestrator
	// launches it as the simulated engine and uploads it to run sweeps.
	Executable string
	// Hostname and PID name this process: the host lock records them, and
	// the sim's GPU memory is held in its process's name.
	Hostname string
	PID      int
}

func newEnv() *env {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	host, _ := os.Hostname()
	return &env{
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		LookupEnv:  os.LookupEnv,
		Now:        time.Now,
		IsTerminal: isTerminal(os.Stdout),
		TermWidth:  func() int { return terminalWidth(os.Getenv, os.Stdout) },
		Executable: exe,
		Hostname:   host,
		PID:        os.Getpid(),
	}
}

// columns is the width tables are drawn to fit, or 0 for the renderer's
// default.
func (e *env) columns() int {
	if e.TermWidth == nil {
		return 0
	}
	return e.TermWidth()
}
