package orchestrator

import (
	"bytes"
	"strings"
)

// FatalSignatures are log lines after which an engine never becomes healthy
// (shared/facts/engines.md): seeing one ends the wait at once, with the log
// tail, instead of at the health timeout.
var FatalSignatures = []string{
	"Traceback (most recent call last)",
	"Scheduler hit an exception",
	"Rank 0 scheduler is dead",
	"Initialization failed",
	"Capture cuda graph failed",
	"CUDA out of memory",
	"NCCL error",
	"Address already in use",
	"unrecognized arguments:",
}

// lineScanner splits a growing log into whole lines, keeping a partial last
// line until the rest of it arrives.
type lineScanner struct {
	partial []byte
}

// feed adds data and returns the whole lines it completes.
func (l *lineScanner) feed(data []byte) []string {
	l.partial = append(l.partial, data...)
	var out []string
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		out = append(out, strings.TrimRight(string(l.partial[:i]), "\r"))
		l.partial = l.partial[i+1:]
	}
	// A line longer than this is not waited on forever.
	if len(l.partial) > 1<<20 {
		out = append(out, string(l.partial))
		l.partial = nil
	}
	return out
}

// fatalLine returns the first signature in line, or "".
func fatalLine(line string) string {
	for _, sig := range FatalSignatures {
		if strings.Contains(line, sig) {
			return sig
		}
	}
	return ""
}

// failureExcerpt picks from a log tail what explains a crash: from the last
// Traceback (or other signature) to the end, so the exception's own line is
// in it. Without a signature it returns the last few lines.
func failureExcerpt(tail string) string {
	lines := strings.Split(strings.TrimRight(tail, "\n"), "\n")
	from := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if fatalLine(lines[i]) != "" {
			from = i
			if strings.Contains(lines[i], "Traceback") {
				break
			}
		}
	}
	if from < 0 {
		from = max(0, len(lines)-3)
	}
	if len(lines)-from > 12 {
		// Keep the head (what failed) and the end (the exception).
		lines = append(append(lines[from:from+4:from+4], "..."), lines[len(lines)-6:]...)
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[from:], "\n")
}
