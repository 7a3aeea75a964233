package orchestrator

import (
	"bytes"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

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

// failureExcerpt picks from a log tail what explains a crash: from the last
// Traceback (or other of the engine's fatal signatures) to the end, so the
// exception's own line is in it. Without a signature it returns the last
// few lines.
func failureExcerpt(p *engine.Profile, tail string) string {
	lines := strings.Split(strings.TrimRight(tail, "\n"), "\n")
	from := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if p.FatalLine(lines[i]) != "" {
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
