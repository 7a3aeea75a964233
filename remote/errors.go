package remote

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDisconnected is wrapped by the error of a call that was in flight when
// the SSH link to its host died. Later calls reconnect.
var ErrDisconnected = errors.New("connection lost")

// maxStderrInError is how much of a failed command's stderr an ExitError's
// message quotes; the whole of it stays in Stderr.
const maxStderrInError = 2048

// ExitError is a command that ran on a host and failed: a non-zero exit
// status, or death by a signal.
type ExitError struct {
	Host   string // the host's name
	Cmd    string // the command line as run
	Status int    // the exit status; -1 when the command died of a signal
	Signal string // the signal that ended the command ("SIGKILL"), if any
	Stderr []byte // everything the command wrote to stderr
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: command %q ", e.Host, shorten(e.Cmd, 200))
	if e.Signal != "" {
		fmt.Fprintf(&b, "killed by %s", e.Signal)
	} else {
		fmt.Fprintf(&b, "exited with status %d", e.Status)
	}
	if s := strings.TrimSpace(string(e.Stderr)); s != "" {
		if len(s) > maxStderrInError {
			s = "…" + s[len(s)-maxStderrInError:]
		}
		fmt.Fprintf(&b, ": %s", s)
	}
	return b.String()
}

// shorten cuts s to at most n bytes for a message.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// normalizeSignal turns "KILL" or "SIGKILL" into "SIGKILL".
func normalizeSignal(s string) string {
	if s == "" || strings.HasPrefix(s, "SIG") {
		return s
	}
	return "SIG" + s
}
